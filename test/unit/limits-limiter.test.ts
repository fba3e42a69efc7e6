// The Limiter contract, run against a factory: the in-memory limiter and the Redis one (on the
// local Redis, a prefix per test, with the caller's clock so the tests can move time). The RPM
// window is exact at its edges; the daily cap resets at the billing-day boundary; refusals change
// nothing; releases turn reservations into spending, once.
import { afterEach, describe, expect, test } from "bun:test";
import { nanos } from "../../src/base/money.ts";
import type { AcquireRequest, Limiter } from "../../src/limits/limiter.ts";
import { MemoryLimiter } from "../../src/limits/memory.ts";
import { acct, kid } from "../helpers/ids.ts";
import { limitRequest, RedisLimiters } from "./limits-redis-fixture.ts";

let redis = new RedisLimiters();
afterEach(async () => {
  await redis.cleanup();
  redis = new RedisLimiters();
});

const FACTORIES: Record<string, (dayOffsetMinutes?: number) => Promise<Limiter>> = {
  memory: async (dayOffsetMinutes = 0) => new MemoryLimiter({ dayOffsetMinutes }),
  redis: (dayOffsetMinutes = 0) => redis.make({ dayOffsetMinutes, clock: "caller" }),
};

const T0 = Date.parse("2026-05-01T12:00:00Z");

function request(partial: Partial<AcquireRequest>): AcquireRequest {
  return limitRequest(T0, partial);
}

for (const [name, make] of Object.entries(FACTORIES)) {
  describe(`${name} limiter`, () => {
    test("the RPM window is exact at its edges", async () => {
      const limiter = await make();
      await limiter.setBalance(acct(1), nanos(1_000), 1);
      expect((await limiter.acquire(request({ rpm: 2, now: T0 }))).ok).toBe(true);
      expect((await limiter.acquire(request({ rpm: 2, now: T0 + 10 }))).ok).toBe(true);
      const refused = await limiter.acquire(request({ rpm: 2, now: T0 + 59_999 }));
      expect(refused).toMatchObject({ ok: false, refusal: "rate_limit_exceeded", retryAfterMs: 1 });
      expect(refused.rate).toEqual({ limit: 2, remaining: 0, resetMs: 1 });
      // At exactly T0 + 60 s the first request has left the window; the second is still in it.
      const atEdge = await limiter.acquire(request({ rpm: 2, now: T0 + 60_000 }));
      expect(atEdge).toMatchObject({ ok: true, rate: { limit: 2, remaining: 0, resetMs: 10 } });
      expect((await limiter.acquire(request({ rpm: 2, now: T0 + 60_009 }))).ok).toBe(false);
      expect((await limiter.acquire(request({ rpm: 2, now: T0 + 60_010 }))).ok).toBe(true);
      // A refused request is not counted: the window holds T0+60000 and T0+60010 only.
      expect(await limiter.peek(kid("k1"), acct(1), 2, T0 + 120_000)).toEqual({
        limit: 2,
        remaining: 1,
        resetMs: 10,
      });
    });

    test("windows are per key", async () => {
      const limiter = await make();
      await limiter.setBalance(acct(1), nanos(0), 1);
      expect((await limiter.acquire(request({ keyId: kid("a"), rpm: 1 }))).ok).toBe(true);
      expect((await limiter.acquire(request({ keyId: kid("a"), rpm: 1 }))).ok).toBe(false);
      expect((await limiter.acquire(request({ keyId: kid("b"), rpm: 1 }))).ok).toBe(true);
    });

    test("concurrency slots are held until release", async () => {
      const limiter = await make();
      await limiter.setBalance(acct(1), nanos(0), 1);
      const first = await limiter.acquire(request({ concurrency: 1 }));
      if (!first.ok) throw new Error("first must pass");
      expect(await limiter.acquire(request({ concurrency: 1 }))).toMatchObject({
        ok: false,
        refusal: "concurrency_limit_exceeded",
      });
      await limiter.release(first.ticket, nanos(0), T0);
      expect((await limiter.acquire(request({ concurrency: 1 }))).ok).toBe(true);
    });

    test("the daily cap resets at the UTC day boundary; reservations in flight carry over", async () => {
      const limiter = await make();
      await limiter.setBalance(acct(1), nanos(1_000_000), 1);
      const endOfDay = Date.parse("2026-05-01T23:59:59.999Z");
      const a = await limiter.acquire(
        request({ dailyCap: nanos(100), reserve: nanos(60), now: endOfDay - 5 }),
      );
      if (!a.ok) throw new Error("a must pass");
      await limiter.release(a.ticket, nanos(60), endOfDay - 4);
      const b = await limiter.acquire(
        request({ dailyCap: nanos(100), reserve: nanos(30), now: endOfDay - 3 }),
      );
      if (!b.ok) throw new Error("b must pass");
      const refused = await limiter.acquire(
        request({ dailyCap: nanos(100), reserve: nanos(20), now: endOfDay }),
      );
      expect(refused).toMatchObject({ ok: false, refusal: "daily_quota_exceeded", retryAfterMs: 1 });
      // Midnight: spent restarts at 0, but b's 30 is still reserved → 80 fits, 71 more would not.
      const midnight = endOfDay + 1;
      expect(
        (await limiter.acquire(request({ dailyCap: nanos(100), reserve: nanos(70), now: midnight }))).ok,
      ).toBe(true);
      expect(
        (await limiter.acquire(request({ dailyCap: nanos(100), reserve: nanos(1), now: midnight }))).ok,
      ).toBe(false);
      const snap = await limiter.snapshot(kid("k1"), acct(1), midnight);
      expect(snap).toMatchObject({ spentToday: 0, keyReserved: 100, dayStart: midnight });
      // b settles after midnight: its cost counts in the new day.
      await limiter.release(b.ticket, nanos(25), midnight + 1);
      expect(await limiter.snapshot(kid("k1"), acct(1), midnight + 1)).toMatchObject({
        spentToday: 25,
        keyReserved: 70,
      });
    });

    test("a configured day offset moves the boundary (UTC+8 day starts at 16:00 UTC)", async () => {
      const limiter = await make(480);
      await limiter.setSpent(kid("k1"), acct(1), nanos(100), Date.parse("2026-05-01T15:59:59Z"));
      const before = await limiter.snapshot(kid("k1"), acct(1), Date.parse("2026-05-01T15:59:59Z"));
      expect(before.spentToday).toBe(nanos(100));
      expect(new Date(before.dayEnd).toISOString()).toBe("2026-05-01T16:00:00.000Z");
      expect(
        (await limiter.snapshot(kid("k1"), acct(1), Date.parse("2026-05-01T16:00:00Z"))).spentToday,
      ).toBe(nanos(0));
    });

    test("balance: reservations count until released, then the actual cost is debited", async () => {
      const limiter = await make();
      await limiter.setBalance(acct(1), nanos(100), 1);
      const a = await limiter.acquire(request({ reserve: nanos(70) }));
      if (!a.ok) throw new Error("a must pass");
      expect(await limiter.acquire(request({ reserve: nanos(31) }))).toMatchObject({
        ok: false,
        refusal: "insufficient_quota",
        facts: { balance: 100, reserved: 70 },
      });
      await limiter.release(a.ticket, nanos(20), T0);
      expect(await limiter.snapshot(kid("k1"), acct(1), T0)).toMatchObject({
        balance: 80,
        accountReserved: 0,
        inFlight: 0,
      });
      expect((await limiter.acquire(request({ reserve: nanos(80) }))).ok).toBe(true);
    });

    test("an account whose balance was never loaded is unknown and can reserve nothing", async () => {
      const limiter = await make();
      expect(await limiter.knowsAccount(acct(7))).toBe(false);
      expect(await limiter.acquire(request({ accountId: acct(7), reserve: nanos(1) }))).toMatchObject({
        ok: false,
        refusal: "insufficient_quota",
      });
      await limiter.setBalance(acct(7), nanos(5), 1);
      expect(await limiter.knowsAccount(acct(7))).toBe(true);
    });

    test("each refusal names the limit it hit, the figures behind it and how long to wait", async () => {
      const limiter = await make();
      await limiter.setBalance(acct(1), nanos(100), 1);
      const held = await limiter.acquire(
        request({ keyId: kid("k2"), rpm: 1, concurrency: 1, reserve: nanos(40) }),
      );
      if (!held.ok) throw new Error("the first request must pass");
      expect(await limiter.acquire(request({ keyId: kid("k2"), rpm: 1 }))).toMatchObject({
        refusal: "rate_limit_exceeded",
        retryAfterMs: 60_000,
        rate: { limit: 1, remaining: 0, resetMs: 60_000 },
        facts: { limit: 1, balance: 100, reserved: 40, spent: 0 },
      });
      expect(await limiter.acquire(request({ keyId: kid("k2"), concurrency: 1 }))).toMatchObject({
        refusal: "concurrency_limit_exceeded",
        retryAfterMs: 1_000,
        facts: { limit: 1, balance: 100, reserved: 40, spent: 0 },
      });
      expect(await limiter.acquire(request({ reserve: nanos(61) }))).toMatchObject({
        refusal: "insufficient_quota",
        retryAfterMs: 60_000,
        facts: { limit: 100, balance: 100, reserved: 40, spent: 0 },
      });
      // The daily cap's figures are the key's: its own reservations, not the account's.
      await limiter.setSpent(kid("k1"), acct(1), nanos(5), T0);
      expect(await limiter.acquire(request({ dailyCap: nanos(10), reserve: nanos(6) }))).toMatchObject({
        refusal: "daily_quota_exceeded",
        retryAfterMs: 12 * 3_600_000,
        rate: { limit: null, remaining: null },
        facts: { limit: 10, balance: 100, reserved: 0, spent: 5 },
      });
    });

    test("a release applied twice changes nothing the second time", async () => {
      const limiter = await make();
      await limiter.setBalance(acct(1), nanos(100), 1);
      const a = await limiter.acquire(request({ concurrency: 1, dailyCap: nanos(100), reserve: nanos(50) }));
      if (!a.ok) throw new Error("a must pass");
      await limiter.release(a.ticket, nanos(30), T0);
      await limiter.release(a.ticket, nanos(30), T0);
      expect(await limiter.snapshot(kid("k1"), acct(1), T0)).toMatchObject({
        balance: 70,
        accountReserved: 0,
        spentToday: 30,
        keyReserved: 0,
        inFlight: 0,
      });
      const b = await limiter.acquire(request({ concurrency: 1, reserve: nanos(70) }));
      expect(b.ok).toBe(true);
    });
    test("TPM: the worst case is held in the window, corrected at release; exact at its edges", async () => {
      const limiter = await make();
      await limiter.setBalance(acct(1), nanos(1_000), 1);
      const tpm = (partial: Partial<AcquireRequest>) => request({ tpm: 1_000, ...partial });
      const a = await limiter.acquire(tpm({ tokens: 600, now: T0 }));
      if (!a.ok) throw new Error("a must pass");
      expect(a.rate.tokens).toEqual({ limit: 1_000, remaining: 400, resetMs: 60_000 });
      // 600 + 600 > 1000: refused until a's worst case leaves the window, nothing counted.
      const refused = await limiter.acquire(tpm({ tokens: 600, now: T0 + 10 }));
      expect(refused).toMatchObject({
        ok: false,
        refusal: "token_rate_limit_exceeded",
        retryAfterMs: 59_990,
        facts: { limit: 1_000 },
      });
      expect(refused.rate.tokens).toEqual({ limit: 1_000, remaining: 400, resetMs: 59_990 });
      // a used 100 tokens: the window now holds 100, so 600 more fit.
      await limiter.release(a.ticket, nanos(0), T0 + 15, undefined, 100);
      await limiter.release(a.ticket, nanos(0), T0 + 15, undefined, 100);
      const b = await limiter.acquire(tpm({ tokens: 600, now: T0 + 20 }));
      expect(b).toMatchObject({ ok: true, rate: { tokens: { limit: 1_000, remaining: 300 } } });
      expect((await limiter.acquire(tpm({ tokens: 301, now: T0 + 30 }))).ok).toBe(false);
      // At exactly T0 + 60 s, a has left the window; b (600) is still in it.
      const limits = { tpm: 1_000, accountTpm: null };
      expect((await limiter.peek(kid("k1"), acct(1), null, T0 + 60_000, limits)).tokens).toEqual({
        limit: 1_000,
        remaining: 400,
        resetMs: 20,
      });
      // A release after its entry left the window changes nothing there.
      if (!b.ok) throw new Error("b must pass");
      await limiter.release(b.ticket, nanos(0), T0 + 60_020, undefined, 5);
      expect((await limiter.peek(kid("k1"), acct(1), null, T0 + 60_020, limits)).tokens).toEqual({
        limit: 1_000,
        remaining: 1_000,
        resetMs: 0,
      });
    });

    test("TPM: a refusal waits exactly until enough tokens leave; a request over the limit is told the window", async () => {
      const limiter = await make();
      await limiter.setBalance(acct(1), nanos(1_000), 1);
      for (const at of [0, 5, 10]) {
        expect((await limiter.acquire(request({ tpm: 1_000, tokens: 300, now: T0 + at }))).ok).toBe(true);
      }
      // 900 held; 500 more need 400 freed: the entries of T0 and T0+5 must leave.
      expect(await limiter.acquire(request({ tpm: 1_000, tokens: 500, now: T0 + 20 }))).toMatchObject({
        ok: false,
        refusal: "token_rate_limit_exceeded",
        retryAfterMs: 59_985,
      });
      expect(await limiter.acquire(request({ tpm: 1_000, tokens: 1_001, now: T0 + 20 }))).toMatchObject({
        ok: false,
        refusal: "token_rate_limit_exceeded",
        retryAfterMs: 60_000,
      });
      expect((await limiter.acquire(request({ tpm: 1_000, tokens: 500, now: T0 + 60_005 }))).ok).toBe(true);
    });

    test("TPM per account counts every key of it; the tighter window is reported", async () => {
      const limiter = await make();
      await limiter.setBalance(acct(1), nanos(1_000), 1);
      const a = await limiter.acquire(
        request({ keyId: kid("a"), accountTpm: 1_000, tpm: 5_000, tokens: 600 }),
      );
      expect(a).toMatchObject({ ok: true, rate: { tokens: { limit: 1_000, remaining: 400 } } });
      expect(
        await limiter.acquire(request({ keyId: kid("b"), accountTpm: 1_000, tokens: 600, now: T0 + 1 })),
      ).toMatchObject({ ok: false, refusal: "token_rate_limit_exceeded", facts: { limit: 1_000 } });
      // Another account is not counted.
      await limiter.setBalance(acct(2), nanos(1_000), 1);
      expect(
        (
          await limiter.acquire(
            request({ accountId: acct(2), keyId: kid("c"), accountTpm: 1_000, tokens: 600 }),
          )
        ).ok,
      ).toBe(true);
    });

    test("TPM: 50 concurrent requests against a window that fits 10 admit exactly 10", async () => {
      const limiter = await make();
      await limiter.setBalance(acct(1), nanos(1_000), 1);
      const results = await Promise.all(
        Array.from({ length: 50 }, () =>
          limiter.acquire(request({ tpm: 1_000, accountTpm: 5_000, tokens: 100 })),
        ),
      );
      expect(results.filter((r) => r.ok).length).toBe(10);
      const rate = await limiter.peek(kid("k1"), acct(1), null, T0, { tpm: 1_000, accountTpm: null });
      expect(rate.tokens?.remaining).toBe(0);
    });
  });
}
