// Budgets with periods, as a Limiter contract run on both engines (in memory, and Redis with the
// caller's clock so time can move): the reservation must fit every budget's spent + reserved in
// its current period; a cost counts in the period of its release; periods turn over at their
// calendar bounds in the configured zone (a request admitted at 23:59:59.9 on the last day of a
// month); a budget with no figure is seeded from the store once; bursts never overspend.
import { afterEach, describe, expect, test } from "bun:test";
import { nanos } from "../../src/base/money.ts";
import type { AcquireRequest, BudgetSpec, Limiter } from "../../src/limits/limiter.ts";
import { MemoryLimiter } from "../../src/limits/memory.ts";
import { BudgetCalendar } from "../../src/limits/periods.ts";
import { acct, kid } from "../helpers/ids.ts";
import { limitRequest, RedisLimiters } from "./limits-redis-fixture.ts";

let redis = new RedisLimiters();
afterEach(async () => {
  await redis.cleanup();
  redis = new RedisLimiters();
});

const FACTORIES: Record<string, (calendar: BudgetCalendar) => Promise<Limiter>> = {
  memory: async (calendar) => new MemoryLimiter({ calendar }),
  redis: (calendar) => redis.make({ calendar, clock: "caller" }),
};

const UTC = () => new BudgetCalendar({ timeZone: "UTC" });
const MAY_END = Date.parse("2026-05-31T23:59:59.900Z");
const JUNE = Date.parse("2026-06-01T00:00:00.000Z");

function budget(period: BudgetSpec["period"], limit: number, name = `k:k1:${period}`): BudgetSpec {
  return { name, period, limit: nanos(limit) };
}

function request(now: number, reserve: number, budgets: BudgetSpec[], seeded = 0): AcquireRequest {
  return limitRequest(now, { reserve: nanos(reserve), budgets, seedBudget: async () => nanos(seeded) });
}

for (const [name, make] of Object.entries(FACTORIES)) {
  describe(`${name} limiter budgets`, () => {
    test("monthly: admitted at 23:59:59.9 on the last day, settled after midnight, counted in the new month", async () => {
      const limiter = await make(UTC());
      await limiter.setBalance(acct(1), nanos(1_000_000), 1);
      const monthly = [budget("monthly", 100)];
      const a = await limiter.acquire(request(MAY_END, 60, monthly));
      if (!a.ok) throw new Error("a must pass");
      // May: nothing spent, 60 reserved; 50 more does not fit until the month ends (in 100 ms).
      expect(await limiter.acquire(request(MAY_END + 50, 50, monthly))).toMatchObject({
        ok: false,
        refusal: "budget_exceeded",
        retryAfterMs: 50,
        facts: { limit: 100, spent: 0, reserved: 60, budget: { period: "monthly", end: JUNE } },
      });
      await limiter.release(a.ticket, nanos(60), JUNE + 100);
      // June holds a's cost; the reservation is gone.
      expect(await limiter.budget?.(acct(1), monthly[0] as BudgetSpec, JUNE + 200)).toMatchObject({
        spent: 60,
        reserved: 0,
        start: JUNE,
        end: Date.parse("2026-07-01T00:00:00Z"),
      });
      expect((await limiter.acquire(request(JUNE + 300, 41, monthly))).ok).toBe(false);
      const b = await limiter.acquire(request(JUNE + 300, 40, monthly));
      expect(b.ok).toBe(true);
    });

    test("every period at once: the first one that does not fit refuses, naming itself; total never resets", async () => {
      const limiter = await make(UTC());
      await limiter.setBalance(acct(1), nanos(1_000_000), 1);
      const all = [
        budget("daily", 100),
        budget("weekly", 150),
        budget("monthly", 1_000),
        budget("total", 170, "a:total"),
      ];
      const t = Date.parse("2026-05-13T10:00:00Z"); // a Wednesday
      const first = await limiter.acquire(request(t, 90, all));
      if (!first.ok) throw new Error("first must pass");
      await limiter.release(first.ticket, nanos(90), t);
      expect(await limiter.acquire(request(t + 1, 20, all))).toMatchObject({
        refusal: "budget_exceeded",
        facts: { budget: { period: "daily" }, spent: 90 },
      });
      // The next day: daily is new; weekly has 60 left.
      const thursday = t + 86_400_000;
      expect(await limiter.acquire(request(thursday, 61, all))).toMatchObject({
        refusal: "budget_exceeded",
        facts: { budget: { period: "weekly", end: Date.parse("2026-05-18T00:00:00Z") } },
      });
      const second = await limiter.acquire(request(thursday, 60, all));
      if (!second.ok) throw new Error("second must pass");
      await limiter.release(second.ticket, nanos(60), thursday);
      // Next week: weekly is new, total (170) has 20 left and is what refuses now, for good.
      const nextWeek = Date.parse("2026-05-19T10:00:00Z");
      expect(await limiter.acquire(request(nextWeek, 21, all))).toMatchObject({
        refusal: "budget_exceeded",
        facts: { budget: { name: "a:total", period: "total" }, spent: 150 },
      });
      expect((await limiter.acquire(request(nextWeek, 20, all))).ok).toBe(true);
    });

    test("a budget without a figure is seeded from the store once, then counted here", async () => {
      const limiter = await make(UTC());
      await limiter.setBalance(acct(1), nanos(1_000_000), 1);
      let seeds = 0;
      const weekly = [budget("weekly", 100)];
      const seeded = (reserve: number) => ({
        ...request(MAY_END, reserve, weekly),
        seedBudget: async () => {
          seeds++;
          return nanos(70);
        },
      });
      expect(await limiter.acquire(seeded(31))).toMatchObject({
        refusal: "budget_exceeded",
        facts: { spent: 70 },
      });
      expect((await limiter.acquire(seeded(30))).ok).toBe(true);
      expect(seeds).toBe(1);
    });

    test("50 concurrent requests against a budget that fits 10: exactly 10 admitted, never negative", async () => {
      const limiter = await make(UTC());
      await limiter.setBalance(acct(1), nanos(1_000_000), 1);
      const monthly = [budget("monthly", 1_000), budget("daily", 10_000)];
      const results = await Promise.all(
        Array.from({ length: 50 }, () => limiter.acquire(request(MAY_END, 100, monthly))),
      );
      const admitted = results.flatMap((r) => (r.ok ? [r.ticket] : []));
      expect(admitted).toHaveLength(10);
      await Promise.all(admitted.map((t) => limiter.release(t, nanos(100), MAY_END)));
      const figures = await limiter.budget?.(acct(1), monthly[0] as BudgetSpec, MAY_END);
      expect(figures).toMatchObject({ spent: 1_000, reserved: 0 });
      expect((await limiter.acquire(request(MAY_END, 1, monthly))).ok).toBe(false);
    });

    test("a release applied twice counts once in every budget, in its token windows and its balance", async () => {
      const limiter = await make(UTC());
      await limiter.setBalance(acct(1), nanos(1_000_000), 1);
      const both = [budget("monthly", 1_000), budget("daily", 1_000, "a:daily")];
      const admitted = await limiter.acquire({ ...request(MAY_END, 100, both), tpm: 10_000, tokens: 500 });
      if (!admitted.ok) throw new Error("must pass");
      await limiter.release(admitted.ticket, nanos(60), MAY_END, undefined, 200);
      await limiter.release(admitted.ticket, nanos(60), MAY_END, undefined, 200);
      for (const spec of both)
        expect(await limiter.budget?.(acct(1), spec, MAY_END)).toMatchObject({ spent: 60, reserved: 0 });
      expect((await limiter.snapshot(kid("k1"), acct(1), MAY_END)).balance).toBe(nanos(1_000_000 - 60));
      const rate = await limiter.peek(kid("k1"), acct(1), null, MAY_END, { tpm: 10_000, accountTpm: null });
      expect(rate.tokens).toMatchObject({ remaining: 10_000 - 200 });
    });

    test("months turn over on the configured reset day in the configured zone", async () => {
      const berlin = new BudgetCalendar({ timeZone: "Europe/Berlin", monthResetDay: 15 });
      const limiter = await make(berlin);
      await limiter.setBalance(acct(1), nanos(1_000_000), 1);
      const monthly = [budget("monthly", 100)];
      // 15 May 00:00 in Berlin (CEST, UTC+2) is 14 May 22:00 UTC.
      const reset = Date.parse("2026-05-14T22:00:00Z");
      const a = await limiter.acquire(request(reset - 100, 100, monthly));
      if (!a.ok) throw new Error("a must pass");
      await limiter.release(a.ticket, nanos(100), reset - 50);
      expect(await limiter.acquire(request(reset - 10, 1, monthly))).toMatchObject({
        refusal: "budget_exceeded",
        retryAfterMs: 10,
      });
      expect((await limiter.acquire(request(reset, 100, monthly))).ok).toBe(true);
    });
  });
}

describe("budget calendar", () => {
  test("bounds in a zone, across a DST change, weeks from the configured day", () => {
    const ny = new BudgetCalendar({ timeZone: "America/New_York", weekStart: "sunday" });
    // 2026-03-08 is the US DST change (02:00 EST → 03:00 EDT): that local day is 23 hours long.
    const dstDay = ny.bounds("daily", Date.parse("2026-03-08T12:00:00Z"));
    expect(new Date(dstDay.start).toISOString()).toBe("2026-03-08T05:00:00.000Z");
    expect(new Date(dstDay.end).toISOString()).toBe("2026-03-09T04:00:00.000Z");
    const week = ny.bounds("weekly", Date.parse("2026-03-11T12:00:00Z"));
    expect(new Date(week.start).toISOString()).toBe("2026-03-08T05:00:00.000Z");
    expect(new Date(week.end).toISOString()).toBe("2026-03-15T04:00:00.000Z");
    const utc = new BudgetCalendar({ timeZone: "UTC", monthResetDay: 28 });
    const feb = utc.bounds("monthly", Date.parse("2026-03-01T00:00:00Z"));
    expect(new Date(feb.start).toISOString()).toBe("2026-02-28T00:00:00.000Z");
    expect(new Date(feb.end).toISOString()).toBe("2026-03-28T00:00:00.000Z");
    expect(utc.bounds("total", 5)).toEqual({ start: 0, end: Number.MAX_SAFE_INTEGER });
  });

  test("UTC, read from Date without Intl, gives the bounds Intl gives for the same zone", () => {
    // "Etc/UTC" is the same zone under another name, so it still goes through Intl.DateTimeFormat.
    const options = [
      { weekStart: "monday", monthResetDay: 1 },
      { weekStart: "sunday", monthResetDay: 28 },
      { weekStart: "thursday", monthResetDay: 15 },
    ] as const;
    // Instants around midnights, month and year ends, a leap day, and one every ~3.7 days over years.
    const instants = [
      "2024-02-29T23:59:59.999Z",
      "2024-03-01T00:00:00.000Z",
      "2025-12-31T23:59:59.999Z",
      "2026-01-01T00:00:00.000Z",
      "2026-03-28T00:00:00.000Z",
    ].map(Date.parse);
    for (
      let t = Date.parse("2023-01-01T00:00:00Z");
      t < Date.parse("2028-01-01T00:00:00Z");
      t += 3.7 * 86_400_000
    )
      instants.push(Math.floor(t));
    for (const option of options) {
      const date = new BudgetCalendar({ timeZone: "UTC", ...option });
      const intl = new BudgetCalendar({ timeZone: "Etc/UTC", ...option });
      for (const at of instants) {
        for (const period of ["daily", "weekly", "monthly"] as const) {
          const viaDate = date.bounds(period, at);
          const viaIntl = intl.bounds(period, at);
          expect({ period, at, ...viaDate }).toEqual({ period, at, ...viaIntl });
        }
      }
    }
  });
});
