// What only a shared limiter must show: several limiter instances (separate connections, as separate
// nodes) admitting at once never over-admit; a slot whose node stopped renewing frees itself;
// releases replayed from any node change nothing; reseeding from several nodes after the data is
// lost converges to the store's figures; Redis down or hung refuses within 250 ms; a Redis that
// lost its scripts reloads them.
import { afterEach, describe, expect, test } from "bun:test";
import { RedisClient } from "bun";
import * as v from "valibot";
import { nanos } from "../../src/base/money.ts";
import { NO_USAGE } from "../../src/billing/contract.ts";
import { UsageFeed } from "../../src/billing/feed.ts";
import { LedgerMeter } from "../../src/billing/ledger.ts";
import { ModelAllowList } from "../../src/catalog/groups.ts";
import { loadConfig } from "../../src/config/load.ts";
import { BillingSchema } from "../../src/config/prices.ts";
import type { BudgetSpec } from "../../src/limits/limiter.ts";
import {
  type AcquireRequest,
  type AcquireResult,
  LimiterUnavailableError,
  type Ticket,
} from "../../src/limits/limiter.ts";
import { BudgetCalendar } from "../../src/limits/periods.ts";
import { RedisLimiter } from "../../src/limits/redis.ts";
import { RedisKeys } from "../../src/limits/redis-keys.ts";
import { SCRIPTS } from "../../src/limits/redis-scripts.ts";
import { openSqliteStore } from "../../src/store/sqlite/store.ts";
import { GatewayError } from "../../src/wire/errors.ts";
import { acct, kid } from "../helpers/ids.ts";
import { admitInput } from "./billing-fixture.ts";
import {
  dropPrefix,
  keysUnder,
  limitRequest,
  PrivateRedis,
  REDIS_URL,
  RedisLimiters,
  SlowRedisProxy,
} from "./limits-redis-fixture.ts";

let limiters = new RedisLimiters();
let privateRedis: PrivateRedis | undefined;
afterEach(async () => {
  await limiters.cleanup();
  limiters = new RedisLimiters();
  await privateRedis?.kill();
  privateRedis = undefined;
});

function request(partial: Partial<AcquireRequest>): AcquireRequest {
  return limitRequest(Date.now(), partial);
}

/** Three nodes of one cluster: three limiters on one prefix, each on its own connection. */
async function nodes(count = 3, options: Parameters<RedisLimiters["make"]>[0] = {}): Promise<RedisLimiter[]> {
  return Promise.all(Array.from({ length: count }, () => limiters.make(options)));
}

/** `total` acquires at once, spread round robin over the nodes. */
function storm(
  nodes: RedisLimiter[],
  total: number,
  partial: Partial<AcquireRequest>,
): Promise<AcquireResult[]> {
  return Promise.all(
    Array.from({ length: total }, (_, i) =>
      (nodes[i % nodes.length] as RedisLimiter).acquire(request(partial)),
    ),
  );
}

/** Redis Cluster's slot of a key: CRC16 (XMODEM) of its hash tag (the first non-empty {...}), mod 16384. */
function hashSlot(key: string): number {
  const open = key.indexOf("{");
  const close = open < 0 ? -1 : key.indexOf("}", open + 1);
  const hashed = close > open + 1 ? key.slice(open + 1, close) : key;
  let crc = 0;
  for (const byte of new TextEncoder().encode(hashed)) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++)
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % 16384;
}

function tickets(results: AcquireResult[]): Ticket[] {
  return results.flatMap((result) => (result.ok ? [result.ticket] : []));
}

describe("several nodes admitting at once", () => {
  test("RPM 6 across three nodes: 18 requests at once admit exactly 6", async () => {
    const cluster = await nodes();
    await cluster[0]?.setBalance(acct(1), nanos(0), 1);
    const results = await storm(cluster, 18, { rpm: 6 });
    expect(tickets(results)).toHaveLength(6);
    const refused = results.filter((result) => !result.ok);
    expect(refused).toHaveLength(12);
    for (const result of refused) {
      expect(result).toMatchObject({ refusal: "rate_limit_exceeded", rate: { limit: 6, remaining: 0 } });
      if (!result.ok) expect(result.retryAfterMs).toBeGreaterThan(0);
    }
  });

  test("TPM 1000 across three nodes (and an account limit): 30 requests of 100 tokens at once admit exactly 10", async () => {
    const cluster = await nodes();
    await cluster[0]?.setBalance(acct(1), nanos(0), 1);
    const results = await storm(cluster, 30, { tpm: 1_000, accountTpm: 2_000, tokens: 100 });
    const admitted = tickets(results);
    expect(admitted).toHaveLength(10);
    for (const result of results.filter((r) => !r.ok)) {
      expect(result).toMatchObject({
        refusal: "token_rate_limit_exceeded",
        rate: { tokens: { remaining: 0 } },
      });
    }
    // Releases on other nodes correct the window: 10 × 30 used, so 7 more of 100 fit.
    await Promise.all(
      admitted.map((t, i) => cluster[i % 3]?.release(t, nanos(0), Date.now(), undefined, 30)),
    );
    expect(tickets(await storm(cluster, 12, { tpm: 1_000, accountTpm: 2_000, tokens: 100 }))).toHaveLength(7);
  });

  test("a monthly budget for 10 across three nodes: 50 at once admit 10, never below zero; Redis's clock picks the period", async () => {
    const cluster = await nodes(3, { clock: "redis" });
    await cluster[0]?.setBalance(acct(1), nanos(1_000_000), 1);
    const monthly = [{ name: "a:monthly", period: "monthly" as const, limit: nanos(1_000) }];
    // Every node asks with a time 40 days off: the script answers with Redis's time and the node
    // computes the period again for it.
    const skewed = Date.now() - 40 * 86_400_000;
    const results = await storm(cluster, 50, { reserve: nanos(100), budgets: monthly, now: skewed });
    const admitted = tickets(results);
    expect(admitted).toHaveLength(10);
    const current = new BudgetCalendar({ timeZone: "UTC" }).bounds("monthly", Date.now());
    for (const ticket of admitted) expect(ticket.budgets?.[0]?.start).toBe(current.start);
    for (const result of results.filter((r) => !r.ok))
      expect(result).toMatchObject({ refusal: "budget_exceeded" });
    await Promise.all(admitted.map((t, i) => cluster[i % 3]?.release(t, nanos(100), Date.now())));
    expect(await cluster[1]?.budget(acct(1), monthly[0] as BudgetSpec, Date.now())).toMatchObject({
      spent: 1_000,
      reserved: 0,
    });
  });

  test("concurrency 2 across three nodes: 9 held requests admit exactly 2, a release frees one", async () => {
    const cluster = await nodes();
    await cluster[0]?.setBalance(acct(1), nanos(0), 1);
    const results = await storm(cluster, 9, { concurrency: 2 });
    const held = tickets(results);
    expect(held).toHaveLength(2);
    expect(results.filter((r) => !r.ok && r.refusal === "concurrency_limit_exceeded")).toHaveLength(7);
    await cluster[2]?.release(held[0] as Ticket, nanos(0), Date.now());
    expect(tickets(await storm(cluster, 6, { concurrency: 2 }))).toHaveLength(1);
  });

  test("a balance for exactly 10 reservations: 45 at once over three nodes admit 10, never below zero", async () => {
    const cluster = await nodes();
    await Promise.all(cluster.map((node) => node.setBalance(acct(1), nanos(1_000), 1)));
    const results = await storm(cluster, 45, { reserve: nanos(100) });
    const held = tickets(results);
    expect(held).toHaveLength(10);
    expect(results.filter((r) => !r.ok && r.refusal === "insufficient_quota")).toHaveLength(35);
    // Each settles at its full reservation on a node other than the one that admitted it.
    await Promise.all(held.map((ticket, i) => cluster[(i + 1) % 3]?.release(ticket, nanos(100), Date.now())));
    expect(await cluster[1]?.snapshot(kid("k1"), acct(1), Date.now())).toMatchObject({
      balance: 0,
      accountReserved: 0,
      inFlight: 0,
      spentToday: 1_000,
    });
    expect((await cluster[2]?.acquire(request({ reserve: nanos(1) })))?.ok).toBe(false);
  });

  test("a daily cap over several keys' nodes: reservations and spending both count", async () => {
    const cluster = await nodes();
    await cluster[0]?.setBalance(acct(1), nanos(1_000_000), 1);
    await cluster[1]?.setSpent(kid("k1"), acct(1), nanos(300), Date.now());
    const results = await storm(cluster, 30, { dailyCap: nanos(1_000), reserve: nanos(100) });
    expect(tickets(results)).toHaveLength(7);
    expect(results.filter((r) => !r.ok && r.refusal === "daily_quota_exceeded")).toHaveLength(23);
  });
});

describe("leases", () => {
  test("a slot whose node stops renewing frees itself once the lease runs out; a late release charges once", async () => {
    // The dead node: its heartbeat never runs (it stopped), so nothing renews its lease.
    const [dead, alive] = await Promise.all([
      limiters.make({ leaseMs: 400, heartbeatMs: 3_600_000 }),
      limiters.make({ leaseMs: 400 }),
    ]);
    if (!dead || !alive) throw new Error("two nodes expected");
    await alive.setBalance(acct(1), nanos(1_000), 1);
    const held = await dead.acquire(request({ concurrency: 1, reserve: nanos(600) }));
    if (!held.ok) throw new Error("the first request must pass");
    expect(await alive.acquire(request({ concurrency: 1 }))).toMatchObject({
      ok: false,
      refusal: "concurrency_limit_exceeded",
    });
    await Bun.sleep(700);
    expect(await alive.snapshot(kid("k1"), acct(1), Date.now())).toMatchObject({
      inFlight: 0,
      accountReserved: 0,
      keyReserved: 0,
      balance: 1_000,
    });
    const next = await alive.acquire(request({ concurrency: 1, reserve: nanos(900) }));
    expect(next.ok).toBe(true);
    // The dead node's settlement arrives after all (a partition healed): its cost is debited once,
    // and the slot and reservation now held by the other request are untouched.
    await dead.release(held.ticket, nanos(50), Date.now());
    await alive.release(held.ticket, nanos(50), Date.now());
    expect(await alive.snapshot(kid("k1"), acct(1), Date.now())).toMatchObject({
      balance: 950,
      accountReserved: 900,
      inFlight: 1,
      spentToday: 50,
    });
  });

  test("a node's heartbeat keeps its slots past the lease time", async () => {
    const [holder, other] = await Promise.all([
      limiters.make({ leaseMs: 600, heartbeatMs: 100 }),
      limiters.make({ leaseMs: 600 }),
    ]);
    if (!holder || !other) throw new Error("two nodes expected");
    await other.setBalance(acct(1), nanos(0), 1);
    const held = await holder.acquire(request({ concurrency: 1 }));
    if (!held.ok) throw new Error("the first request must pass");
    await Bun.sleep(1_800);
    expect(await other.acquire(request({ concurrency: 1 }))).toMatchObject({
      ok: false,
      refusal: "concurrency_limit_exceeded",
    });
    await holder.release(held.ticket, nanos(0), Date.now());
    expect((await other.acquire(request({ concurrency: 1 }))).ok).toBe(true);
  });
});

describe("releases and seeding", () => {
  test("a release replayed on every node applies once", async () => {
    const cluster = await nodes();
    await cluster[0]?.setBalance(acct(1), nanos(1_000), 1);
    const a = await cluster[0]?.acquire(request({ concurrency: 5, reserve: nanos(200) }));
    const b = await cluster[1]?.acquire(request({ concurrency: 5, reserve: nanos(200) }));
    if (!a?.ok || !b?.ok) throw new Error("both must pass");
    await Promise.all(cluster.flatMap((node) => [node.release(a.ticket, nanos(120), Date.now())]));
    await Promise.all(cluster.map((node) => node.release(a.ticket, nanos(120), Date.now())));
    expect(await cluster[2]?.snapshot(kid("k1"), acct(1), Date.now())).toMatchObject({
      balance: 880,
      accountReserved: 200,
      keyReserved: 200,
      inFlight: 1,
      spentToday: 120,
    });
    // Only b is still held (by the node that admitted it); the replays left nothing pending anywhere.
    expect(cluster.map((node) => node.held)).toEqual([0, 1, 0]);
  });

  test("releases made in one turn reach Redis in one script, each counted as if released alone", async () => {
    privateRedis = await PrivateRedis.start();
    const redis = privateRedis;
    const node = await limiters.make({ url: redis.url });
    await node.setBalance(acct(1), nanos(10_000), 1);
    const weekly = { name: "a:weekly", period: "weekly" as const, limit: nanos(1_000_000) };
    const admitted = tickets(
      await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          node.acquire(
            request({
              keyId: kid(`k${1 + (i % 2)}`),
              concurrency: 10,
              reserve: nanos(500),
              tpm: 10_000,
              accountTpm: 20_000,
              tokens: 100,
              // Half of them count in a budget too.
              ...(i % 2 === 0 ? { budgets: [weekly] } : {}),
            }),
          ),
        ),
      ),
    );
    expect(admitted).toHaveLength(6);
    const scripts = async () => {
      const stats = String(await redis.send("INFO", ["commandstats"]));
      return Number(/^cmdstat_evalsha:calls=(\d+)/m.exec(stats)?.[1] ?? 0);
    };
    const before = await scripts();
    await Promise.all(admitted.map((t, i) => node.release(t, nanos(100 + i), Date.now(), undefined, 40)));
    expect((await scripts()) - before).toBe(1);
    expect(node.held).toBe(0);
    // 100 + … + 105 debited, every reservation and slot freed, each window holding 40 a ticket.
    expect(await node.snapshot(kid("k1"), acct(1), Date.now())).toMatchObject({
      balance: 10_000 - 615,
      accountReserved: 0,
      keyReserved: 0,
      inFlight: 0,
      spentToday: 100 + 102 + 104,
    });
    const rate = await node.peek(kid("k2"), acct(1), null, Date.now(), { tpm: 10_000, accountTpm: 20_000 });
    expect(rate.tokens).toMatchObject({ limit: 10_000, remaining: 10_000 - 3 * 40 });
    expect(await node.budget(acct(1), weekly, Date.now())).toMatchObject({
      spent: 100 + 102 + 104,
      reserved: 0,
    });
    // Released again (a replay), in one turn too: nothing changes.
    await Promise.all(admitted.map((t, i) => node.release(t, nanos(100 + i), Date.now(), undefined, 40)));
    expect(await node.snapshot(kid("k1"), acct(1), Date.now())).toMatchObject({
      balance: 10_000 - 615,
      inFlight: 0,
    });
    expect(await node.budget(acct(1), weekly, Date.now())).toMatchObject({ spent: 100 + 102 + 104 });
  });

  test("three nodes reseeding after the data is lost converge exactly to the store's figures", async () => {
    const cluster = await nodes();
    const [one, two, three] = cluster;
    if (!one || !two || !three) throw new Error("three nodes expected");
    const now = Date.now();
    await Promise.all(cluster.map((node) => node.setBalance(acct(1), nanos(1_000), 4)));
    await Promise.all(cluster.map((node) => node.setSpent(kid("k1"), acct(1), nanos(0), now)));
    const a = await one.acquire(request({ reserve: nanos(100) }));
    if (!a.ok) throw new Error("a must pass");
    await two.release(a.ticket, nanos(100), now);
    // Seeding again at the same revision never overwrites or adds to live counters.
    await Promise.all(cluster.map((node) => node.setBalance(acct(1), nanos(1_000), 4)));
    await Promise.all(cluster.map((node) => node.setSpent(kid("k1"), acct(1), nanos(0), now)));
    expect(await three.snapshot(kid("k1"), acct(1), now)).toMatchObject({ balance: 900, spentToday: 100 });

    expect(await dropPrefix(limiters.prefix)).toBeGreaterThan(0);
    expect(await one.knowsAccount(acct(1))).toBe(true); // a node's cache, until its next admission sees the loss
    const lost = await one.acquire(request({ reserve: nanos(1) }));
    expect(lost).toMatchObject({ ok: false, refusal: "insufficient_quota" });
    expect(await one.knowsAccount(acct(1))).toBe(false);
    // The store's state (balance 900 at revision 4, 100 spent today), seeded by all three at once, twice.
    for (let round = 0; round < 2; round++) {
      await Promise.all(
        cluster.flatMap((node) => [
          node.setBalance(acct(1), nanos(900), 4),
          node.setSpent(kid("k1"), acct(1), nanos(100), now),
        ]),
      );
    }
    expect(await two.snapshot(kid("k1"), acct(1), now)).toMatchObject({
      balance: 900,
      spentToday: 100,
      accountReserved: 0,
      inFlight: 0,
    });
    // A credit made in the store moves its revision: the newer figure replaces the seeded one.
    await Promise.all(cluster.map((node) => node.setBalance(acct(1), nanos(1_400), 5)));
    await Promise.all(cluster.map((node) => node.setBalance(acct(1), nanos(900), 4)));
    expect((await three.snapshot(kid("k1"), acct(1), now)).balance).toBe(nanos(1_400));
  });

  test("a credit reseed moves the balance by the credit total's change, keeping releases not yet stored", async () => {
    const cluster = await nodes();
    const [one, two, three] = cluster;
    if (!one || !two || !three) throw new Error("three nodes expected");
    const now = Date.now();
    await Promise.all(cluster.map((node) => node.setBalance(acct(1), nanos(1_000), 1, nanos(0))));
    const a = await one.acquire(request({ reserve: nanos(100) }));
    if (!a.ok) throw new Error("a must pass");
    await one.release(a.ticket, nanos(100), now); // released in Redis, not stored yet
    // A credit of 500 is stored (revision 2); the store's balance does not have the debit yet.
    await Promise.all([two, three].map((node) => node.setBalance(acct(1), nanos(1_500), 2, nanos(500))));
    expect((await three.snapshot(kid("k1"), acct(1), now)).balance).toBe(nanos(1_400));
    // An older revision read late changes nothing; a later one without a new credit changes nothing.
    await one.setBalance(acct(1), nanos(1_000), 1, nanos(0));
    await one.setBalance(acct(1), nanos(1_400), 3, nanos(500));
    expect((await two.snapshot(kid("k1"), acct(1), now)).balance).toBe(nanos(1_400));
  });

  test("every key of an account is in its {acct:N} hash slot", async () => {
    const [node] = await nodes(1);
    if (!node) throw new Error("one node expected");
    await node.setBalance(acct(42), nanos(10), 1);
    const a = await node.acquire(
      request({ accountId: acct(42), keyId: kid("key_x"), rpm: 5, reserve: nanos(1) }),
    );
    if (!a.ok) throw new Error("a must pass");
    const whileHeld = await keysUnder(limiters.prefix);
    await node.release(a.ticket, nanos(1), Date.now());
    const keys = [...new Set([...whileHeld, ...(await keysUnder(limiters.prefix))])];
    // account, tickets, leases and window while held; the released-ids set after.
    expect(keys).toHaveLength(5);
    const slots = new Set(keys.map(hashSlot));
    expect(slots.size).toBe(1);
    expect(keys.every((key) => key.startsWith(`${limiters.prefix}:{acct:42}:`))).toBe(true);
  });
});

describe("Redis down", () => {
  test("killed: acquire rejects as unreachable (not at a socket timeout); restarted empty: the scripts reload, the node reseeds", async () => {
    privateRedis = await PrivateRedis.start();
    const node = await limiters.make({ url: privateRedis.url });
    await node.setBalance(acct(1), nanos(1_000), 1);
    const held = await node.acquire(request({ reserve: nanos(100) }));
    if (!held.ok) throw new Error("must pass before Redis stops");
    await privateRedis.kill();
    const failure = await node.acquire(request({ reserve: nanos(100) })).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(LimiterUnavailableError);
    // Refused by the connection's loss or the Redis deadline, the two bounded paths (how long it
    // takes is the bench's to measure, not a test's on a shared machine).
    expect((failure as Error).message).toMatch(
      /is unreachable|is not connected|did not answer .* within 200 ms/,
    );
    // A settlement while Redis is down is kept and retried by the heartbeat.
    await node.release(held.ticket, nanos(40), Date.now());
    expect(node.held).toBe(1);

    await privateRedis.restart();
    let first: AcquireResult | undefined;
    for (let i = 0; i < 50 && first === undefined; i++) {
      first = await node.acquire(request({ reserve: nanos(1) })).catch(() => undefined);
      if (first === undefined) await Bun.sleep(100);
    }
    // Reconnected to an empty Redis: the account is unknown again, so the gateway reseeds it.
    expect(first).toMatchObject({ ok: false, refusal: "insufficient_quota" });
    expect(await node.knowsAccount(acct(1))).toBe(false);
    await node.beat();
    expect(node.held).toBe(0);
    await node.setBalance(acct(1), nanos(960), 2);
    expect(await node.acquire(request({ reserve: nanos(960) }))).toMatchObject({ ok: true });
    expect((await node.acquire(request({ reserve: nanos(1) }))).ok).toBe(false);
  });

  test("hung (SIGSTOP): acquire rejects at the deadline", async () => {
    privateRedis = await PrivateRedis.start();
    const node = await limiters.make({ url: privateRedis.url, timeoutMs: 150 });
    await node.setBalance(acct(1), nanos(1_000), 1);
    privateRedis.signal("SIGSTOP");
    try {
      const failure = await node.acquire(request({ reserve: nanos(1) })).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(LimiterUnavailableError);
      // The node's deadline refused it (a hung Redis never answers: nothing else could end the call).
      expect((failure as Error).message).toMatch(/did not answer .* within 150 ms/);
    } finally {
      privateRedis.signal("SIGCONT");
    }
  });

  test("a busy event loop is not a slow Redis: calls sent before the loop blocks for 3 deadlines are answered, not refused", async () => {
    const node = await limiters.make({ timeoutMs: 100 });
    await node.setBalance(acct(1), nanos(1_000_000), 1);
    for (let round = 0; round < 3; round++) {
      const calls = Array.from({ length: 20 }, () => node.acquire(request({ reserve: nanos(1) })));
      // The loop is blocked on purpose (as by a CPU-starved host): every timer fires late.
      const until = performance.now() + 300;
      while (performance.now() < until) {}
      const results = await Promise.allSettled(calls);
      expect(results.filter((r) => r.status === "rejected")).toEqual([]);
    }
  });

  test("a read-only replica (a demoted master after a failover): 503 limiter_unavailable, not an error", async () => {
    privateRedis = await PrivateRedis.start();
    const master = await PrivateRedis.start();
    try {
      const node = await limiters.make({ url: privateRedis.url });
      await node.setBalance(acct(1), nanos(1_000), 1);
      await privateRedis.send("REPLICAOF", ["127.0.0.1", String(master.port)]);
      const failure = await node.acquire(request({ reserve: nanos(1) })).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(LimiterUnavailableError);
      expect(String(failure)).toContain("READONLY");
    } finally {
      await master.kill();
    }
  });

  test("slow: an acquire that times out here after Redis ran it gives its slot, reservation and RPM count back", async () => {
    const proxy = SlowRedisProxy.start(REDIS_URL);
    try {
      // A lease far longer than the test: only the cancel can bring the slot back in time.
      const node = await limiters.make({ url: proxy.url, timeoutMs: 150, leaseMs: 120_000 });
      await node.setBalance(acct(1), nanos(1_000), 1);
      const limits = { rpm: 5, concurrency: 1, reserve: nanos(100) };
      proxy.delayMs = 400;
      const failure = await node.acquire(request(limits)).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(LimiterUnavailableError);

      proxy.delayMs = 0;
      // Poll (bounded) until nothing is in flight: the late admission is undone, or the test fails.
      let inFlight = -1;
      for (let i = 0; i < 50 && inFlight !== 0; i++) {
        await node.beat().catch(() => undefined);
        inFlight = await node
          .snapshot(kid("k1"), acct(1), Date.now())
          .then((s) => s.inFlight)
          .catch(() => -1);
        if (inFlight !== 0) await Bun.sleep(100);
      }
      const snapshot = await node.snapshot(kid("k1"), acct(1), Date.now());
      expect(snapshot).toMatchObject({ inFlight: 0, keyReserved: 0, accountReserved: 0 });
      expect((await node.peek(kid("k1"), acct(1), 5, Date.now())).remaining).toBe(5);
      // Once Redis answers in time again, the heartbeat's retry confirms the cancel and forgets it.
      await node.beat();
      expect(node.cancelling).toBe(0);
      expect(await node.acquire(request(limits))).toMatchObject({ ok: true });
    } finally {
      await limiters.cleanup();
      proxy.stop();
    }
  }, 20_000);

  test("a cancelled ticket id is never admitted, even when its acquire runs after the cancel", async () => {
    const node = await limiters.make();
    await node.setBalance(acct(1), nanos(1_000), 1);
    const keys = new RedisKeys(limiters.prefix);
    const account = keys.account(acct(1));
    const window = keys.window(acct(1), kid("k1"));
    const client = new RedisClient(REDIS_URL);
    try {
      const cancelled = await SCRIPTS.cancel.run(
        client,
        [account.account, account.tickets, account.leases, account.done, window],
        ["0", "t-late", "600000"],
      );
      expect(cancelled).toBe(1);
      const reply = await SCRIPTS.acquire.run(
        client,
        [account.account, account.tickets, account.leases, window, account.done],
        ["0", "t-late", "k1", "5", "1", "-1", "100", "", "60000", "15000", "0"],
      );
      expect((reply as number[]).slice(0, 2)).toEqual([0, 5]);
      expect(await node.snapshot(kid("k1"), acct(1), Date.now())).toMatchObject({
        inFlight: 0,
        accountReserved: 0,
      });
      expect((await node.peek(kid("k1"), acct(1), 5, Date.now())).remaining).toBe(5);
    } finally {
      client.close();
    }
  });

  // Fails by its deadline (200 ms by default, under the 250 ms promised), not by a retry loop:
  // the error names the deadline. How long that takes in wall time is the bench's to measure.
  test("unreachable at start: connect fails by its 200 ms deadline", async () => {
    privateRedis = await PrivateRedis.start();
    const url = privateRedis.url;
    await privateRedis.kill();
    const failure = await RedisLimiter.connect({ url, prefix: limiters.prefix }).catch(
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(LimiterUnavailableError);
    expect(String(failure)).toContain("did not answer connecting within 200 ms");
  });

  test("scripts flushed from Redis are loaded again on the next call", async () => {
    privateRedis = await PrivateRedis.start();
    const node = await limiters.make({ url: privateRedis.url });
    await node.setBalance(acct(1), nanos(10), 1);
    const client = new RedisClient(privateRedis.url);
    try {
      await client.send("SCRIPT", ["FLUSH"]);
    } finally {
      client.close();
    }
    expect((await node.acquire(request({ reserve: nanos(10) }))).ok).toBe(true);
  });

  test("the gateway answers 503 limiter_unavailable and charges nothing", async () => {
    privateRedis = await PrivateRedis.start();
    const gate = await meterOn(privateRedis.url);
    try {
      const admission = await gate.meter.admit(gate.input());
      await privateRedis.kill();
      const failure = await gate.meter.admit(gate.input()).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(GatewayError);
      if (!(failure instanceof GatewayError)) throw failure;
      expect(failure.status).toBe(503);
      expect(failure.toOpenAI().error.code).toBe("limiter_unavailable");
      expect(failure.retryAfterSeconds).toBe(1);
      // The request admitted before the outage still settles (into the store; Redis later).
      await admission.settle({ status: 200, source: "none", usage: NO_USAGE, channels: [] });
      await gate.meter.flush();
    } finally {
      await gate.close();
    }
  });

  test("Redis back empty: the meter reseeds the balance and today's spending from the store", async () => {
    privateRedis = await PrivateRedis.start();
    const gate = await meterOn(privateRedis.url, nanos(5_000_000_000));
    try {
      const admission = await gate.meter.admit(gate.input());
      await admission.settle({
        status: 200,
        source: "reported",
        usage: { ...NO_USAGE, inputTokens: 1_000, outputTokens: 500 },
        channels: ["sim"],
      });
      await gate.meter.flush();
      const before = await gate.meter.balance(gate.principal);
      expect(before.spentToday).toBeGreaterThan(0);
      await privateRedis.kill();
      await privateRedis.restart();
      let admitted: Awaited<ReturnType<typeof gate.meter.admit>> | undefined;
      for (let i = 0; i < 50 && admitted === undefined; i++) {
        admitted = await gate.meter.admit(gate.input()).catch(() => undefined);
        if (admitted === undefined) await Bun.sleep(100);
      }
      if (!admitted) throw new Error("never admitted after Redis came back");
      const after = await gate.meter.balance(gate.principal);
      expect(after.balance).toBe(before.balance);
      expect(after.spentToday).toBe(before.spentToday);
      expect(after.keyReserved).toBeGreaterThan(0);
      await admitted.settle({ status: 200, source: "none", usage: NO_USAGE, channels: [] });
    } finally {
      await gate.close();
    }
  });
});

/** A LedgerMeter on a fresh SQLite store, its limiter on the Redis at `url`, with a key capped per day. */
async function meterOn(url: string, dailyCap = nanos(1e12)) {
  const store = openSqliteStore(":memory:");
  await store.migrate();
  const account = await store.createAccount("acme", nanos(1_000_000_000_000));
  await store.setGroup("default", ["*"]);
  const key = await store.createKey({
    id: kid("key_test"),
    account: "acme",
    group: "default",
    name: "test",
    prefix: "sk-test",
    secretHash: "unused",
    expiresAt: null,
    allowIps: null,
    dailyCap,
    rpm: null,
    concurrency: null,
    tpm: null,
    budgets: null,
  });
  const limiter = await limiters.make({ url });
  const billing = v.parse(BillingSchema, {});
  const meter = new LedgerMeter({ store, feed: new UsageFeed(), billing, limiter, pollMs: 0 });
  await meter.start();
  const principal = {
    keyId: key.id,
    keyName: key.name,
    accountId: account.id,
    accountName: account.name,
    group: "default",
    models: new ModelAllowList(["*"]),
    dailyCap,
    rpm: null,
    concurrency: null,
    tpm: null,
    budgets: null,
    accountBudgets: null,
  };
  return {
    meter,
    principal,
    input: () =>
      admitInput(principal, "modelx-5.4-mini", { kind: "text", inputTokens: 10, maxOutputTokens: 10 }),
    close: async () => {
      await meter.close();
      await store.close();
    },
  };
}

describe("redis settings", () => {
  test("redis.url, redis.prefix and redis.timeout_ms from variables or flags; a bad one names the setting and its source", () => {
    const config = loadConfig({
      env: { MODELGATE_REDIS_URL: "redis://10.0.0.5:6379" },
      flags: { "redis-prefix": "eu1" },
    });
    expect(config.redis).toEqual({
      url: "redis://10.0.0.5:6379",
      prefix: "eu1",
      lease_seconds: 15,
      timeout_ms: 200,
    });
    expect(loadConfig({ env: {}, flags: {} }).redis).toEqual({
      prefix: "modelgate",
      lease_seconds: 15,
      timeout_ms: 200,
    });
    expect(loadConfig({ env: { MODELGATE_REDIS_TIMEOUT_MS: "500" }, flags: {} }).redis.timeout_ms).toBe(500);
    expect(errorOf(() => loadConfig({ env: {}, flags: { "redis-timeout-ms": "1" } }))).toContain(
      "redis.timeout_ms",
    );
    const badUrl = errorOf(() => loadConfig({ env: { MODELGATE_REDIS_URL: "10.0.0.5:6379" }, flags: {} }));
    expect(badUrl).toContain("redis.url");
    expect(badUrl).toContain("MODELGATE_REDIS_URL");
    expect(errorOf(() => loadConfig({ env: {}, flags: { "redis-prefix": "a{b}" } }))).toContain(
      "--redis-prefix",
    );
  });
});

function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  throw new Error("expected an error");
}
