// The Redis limiter attached to a ledger (an in-memory stand-in for PostgreSQL's): a release counts
// once whether the ledger held its record at the seed or not, however often it is sent, in every
// figure it touches (balance, reservations, token windows, budgets), in its epoch or a new one; the
// reconciliation puts a drifted account back to the ledger's figures and reports it; a copy of
// another database is not trusted; and what a reconciliation of 1000 accounts costs.
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RedisClient } from "bun";
import { nanos } from "../../src/base/money.ts";
import type { AccountId } from "../../src/base/types.ts";
import type { BudgetSpec, LedgerFigures, LimiterLedger, Ticket } from "../../src/limits/limiter.ts";
import type { RedisLimiter } from "../../src/limits/redis.ts";
import { RedisKeys } from "../../src/limits/redis-keys.ts";
import { acct, kid } from "../helpers/ids.ts";
import { waitFor } from "../helpers/wait.ts";
import { dropPrefix, limitRequest, PrivateRedis, REDIS_URL, RedisLimiters } from "./limits-redis-fixture.ts";

let limiters = new RedisLimiters();
afterEach(async () => {
  await limiters.cleanup();
  limiters = new RedisLimiters();
});

/** A ledger in memory: balances, how far its one journal is stored, spending, nodes, epoch. */
class FakeLedger implements LimiterLedger {
  readonly journal = "j1";
  ledgerId = "42";
  epoch = 0;
  revision = 1;
  readonly balances = new Map<AccountId, number>();
  stored = 0;
  readonly spent: LedgerFigures["spent"] = [];

  async identity() {
    return { ledger: this.ledgerId, epoch: this.epoch };
  }
  async nextEpoch(seen: number) {
    this.epoch = Math.max(this.epoch, seen) + 1;
    return this.epoch;
  }
  async beat(node: string) {
    return [node];
  }
  async leave() {}
  async figures(): Promise<LedgerFigures> {
    return {
      revision: this.revision,
      balances: new Map([...this.balances].map(([id, b]) => [id, nanos(b)])),
      journals: new Map([[this.journal, this.stored]]),
      spent: [...this.spent],
    };
  }
}

async function attached(ledger: FakeLedger) {
  const limiter = await limiters.make({ heartbeatMs: 3_600_000, epochWatchMs: 3_600_000 });
  limiter.attach(ledger);
  await limiter.rebase();
  return limiter;
}

async function redisBalance(prefix: string, accountId: number): Promise<number> {
  const client = new RedisClient(REDIS_URL);
  try {
    return Number(await client.send("HGET", [new RedisKeys(prefix).account(acct(accountId)).account, "bal"]));
  } finally {
    client.close();
  }
}

describe("attached to a ledger", () => {
  test("a release counts once: sent twice, or after a seed whose ledger already held its record", async () => {
    const ledger = new FakeLedger();
    ledger.balances.set(acct(1), 1_000);
    const node = await attached(ledger);
    const admit = async () => {
      const result = await node.acquire(limitRequest(Date.now(), { reserve: nanos(100) }));
      if (!result.ok) throw new Error(`refused: ${result.refusal}`);
      return result.ticket;
    };
    const first = await admit();
    await node.release(first, nanos(60), Date.now(), 1);
    await node.release(first, nanos(60), Date.now(), 1); // a replay
    expect(await redisBalance(limiters.prefix, 1)).toBe(940);

    // The ledger stores record 1 and a reseed runs: still 940, and record 1 sent again changes nothing.
    ledger.balances.set(acct(1), 940);
    ledger.stored = 1;
    await node.rebase();
    await node.release(first, nanos(60), Date.now(), 1);
    expect(await redisBalance(limiters.prefix, 1)).toBe(940);

    // Record 2 stored by the ledger before its release reaches Redis: the reseed counts it, the release does not again.
    const second = await admit();
    ledger.balances.set(acct(1), 900);
    ledger.stored = 2;
    await node.rebase();
    await node.release(second, nanos(40), Date.now(), 2);
    expect(await redisBalance(limiters.prefix, 1)).toBe(900);
    expect((await node.snapshot(kid("k1"), acct(1), Date.now())).accountReserved).toBe(nanos(0));
  });

  test("the reconciliation puts a drifted balance back to the ledger's and reports it", async () => {
    const ledger = new FakeLedger();
    ledger.balances.set(acct(1), 5_000);
    const node = await attached(ledger);
    const client = new RedisClient(REDIS_URL);
    try {
      await client.send("HINCRBY", [new RedisKeys(limiters.prefix).account(acct(1)).account, "bal", "777"]);
    } finally {
      client.close();
    }
    const before = node.reconciled.corrected;
    await node.rebase();
    expect(await redisBalance(limiters.prefix, 1)).toBe(5_000);
    expect(node.reconciled.corrected - before).toBe(1);
    expect(node.reconciled.balanceNanos).toBe(777);
  });

  test("a copy of another database under the same prefix is rebuilt, not trusted", async () => {
    const ledger = new FakeLedger();
    ledger.balances.set(acct(1), 5_000);
    const node = await attached(ledger);
    expect(node.epoch).toBe(1);
    const other = new FakeLedger();
    other.ledgerId = "7";
    other.balances.set(acct(1), 300);
    const second = await attached(other);
    expect(second.epoch).toBe(2);
    expect(await redisBalance(limiters.prefix, 1)).toBe(300);
  });

  test("a database restored from a backup (this node's stored records are gone from it) is rebuilt in a new epoch", async () => {
    const ledger = new FakeLedger();
    ledger.balances.set(acct(1), 1_000);
    const node = await attached(ledger);
    ledger.stored = 5;
    node.stored(5);
    await node.rebase();
    expect(node.epoch).toBe(1);
    // The backup: before records 3-5 and with the balance they had not spent yet.
    ledger.stored = 2;
    ledger.balances.set(acct(1), 1_300);
    await node.rebase();
    expect(node.epoch).toBe(2);
    expect(await redisBalance(limiters.prefix, 1)).toBe(1_300);
    await node.rebase(); // detected once: the next reconciliation stays in the epoch
    expect(node.epoch).toBe(2);
  });

  test("cost: reconciling 1000 accounts is one ledger read and one script each", async () => {
    const ledger = new FakeLedger();
    for (let id = 1; id <= 1000; id++) ledger.balances.set(acct(id), 1_000_000);
    const node = await attached(ledger);
    const runs: number[] = [];
    for (let i = 0; i < 3; i++) {
      await node.rebase();
      runs.push(node.reconciled.lastMs);
    }
    console.log(`reconciling 1000 accounts: ${runs.map((ms) => ms.toFixed(1)).join(", ")} ms`);
    expect(node.reconciled.corrected).toBe(0);
  });
});

describe("budgets across a loss of Redis's data", () => {
  test("a held reservation still counts in its budget after Redis lost everything (re-registered with the ticket)", async () => {
    const ledger = new FakeLedger();
    ledger.balances.set(acct(1), 1_000_000);
    const limiter = await attached(ledger);
    const monthly = { name: "a:monthly", period: "monthly" as const, limit: nanos(1_000) };
    const request = (reserve: number) =>
      limitRequest(Date.now(), {
        reserve: nanos(reserve),
        budgets: [monthly],
        seedBudget: async () => nanos(0),
      });
    const held = await limiter.acquire(request(600));
    expect(held.ok).toBe(true);
    await dropPrefix(limiters.prefix);
    // Rebuilt in a new epoch: the held ticket's 600 count again in the budget, so 600 more do not fit.
    expect(await limiter.acquire(request(600))).toMatchObject({ ok: false, refusal: "budget_exceeded" });
    expect((await limiter.acquire(request(400))).ok).toBe(true);
  });
});

/** Every figure a release touches, read back: the account's, the key's, both token windows, both budgets. */
async function touched(node: RedisLimiter, prefix: string, url = REDIS_URL) {
  const snap = await node.snapshot(kid("k1"), acct(1), Date.now());
  const budget = async (spec: BudgetSpec) => {
    const b = await node.budget(acct(1), spec, Date.now());
    return b && { spent: Number(b.spent), reserved: Number(b.reserved) };
  };
  const keys = new RedisKeys(prefix);
  const client = new RedisClient(url);
  try {
    const tokens = async (h: string) => Number(await client.send("HGET", [h, "sum"]));
    return {
      balance: Number(snap.balance),
      accountReserved: Number(snap.accountReserved),
      keyReserved: Number(snap.keyReserved),
      inFlight: snap.inFlight,
      spentToday: Number(snap.spentToday),
      keyTokens: await tokens(keys.tokens(acct(1), kid("k1")).h),
      accountTokens: await tokens(keys.tokens(acct(1)).h),
      monthly: await budget(MONTHLY),
      daily: await budget(DAILY),
    };
  } finally {
    client.close();
  }
}

/** The figures once releases costing `cost` and using `tokens` in all each counted once, nothing held (balance 1,000,000 before). */
function countedOnce(cost: number, tokens: number) {
  const budget = { spent: cost, reserved: 0 };
  return {
    balance: 1_000_000 - cost,
    accountReserved: 0,
    keyReserved: 0,
    inFlight: 0,
    spentToday: cost,
    keyTokens: tokens,
    accountTokens: tokens,
    monthly: budget,
    daily: budget,
  };
}

const MONTHLY: BudgetSpec = { name: "k:k1:monthly", period: "monthly", limit: nanos(1_000_000) };
const DAILY: BudgetSpec = { name: "a:daily", period: "daily", limit: nanos(1_000_000) };

/** An admission reserving 100 and holding 500 tokens in the key's and the account's windows, counted in two budgets. */
async function admitIn(node: RedisLimiter): Promise<Ticket> {
  const result = await node.acquire(
    limitRequest(Date.now(), {
      reserve: nanos(100),
      tpm: 100_000,
      accountTpm: 100_000,
      tokens: 500,
      budgets: [MONTHLY, DAILY],
      seedBudget: async () => nanos(0),
    }),
  );
  if (!result.ok) throw new Error(`refused: ${result.refusal}`);
  return result.ticket;
}

describe("a numbered release sent again changes every figure once", () => {
  test("alone and batched, and again after a reconciliation took it out of U (budgets included)", async () => {
    const ledger = new FakeLedger();
    ledger.balances.set(acct(1), 1_000_000);
    const node = await attached(ledger);
    const [t1, t2, t3] = [await admitIn(node), await admitIn(node), await admitIn(node)];
    if (!t1 || !t2 || !t3) throw new Error("three tickets");
    const sendT1 = () => node.release(t1, nanos(60), Date.now(), 1, 200);
    // t2 and t3 settle in one turn: one RELEASE script carries both.
    const sendBatch = () =>
      Promise.all([
        node.release(t2, nanos(40), Date.now(), 2, 100),
        node.release(t3, nanos(30), Date.now(), 3, 50),
      ]);
    const once = countedOnce(130, 350);
    await sendT1();
    await sendT1(); // a retry after a lost reply
    await sendBatch();
    await sendBatch(); // the batch retried
    expect(await touched(node, limiters.prefix)).toEqual(once);

    // The ledger stores records 1-3 and a reconciliation seeds the account (U forgets them): sent
    // again now, alone and batched, they still change nothing.
    ledger.balances.set(acct(1), 999_870);
    ledger.spent.push({ keyId: kid("k1"), accountId: acct(1), spent: nanos(130) });
    ledger.stored = 3;
    await node.rebase();
    expect(await touched(node, limiters.prefix)).toEqual(once);
    await sendT1();
    await sendBatch();
    expect(await touched(node, limiters.prefix)).toEqual(once);

    // Record 4 reaches the ledger (and a seed) before its release reaches Redis: the balance and
    // the day's spending have it from the seed, the budgets (seeded before it was stored) count it
    // when it arrives, once however often it is sent.
    const t4 = await admitIn(node);
    ledger.balances.set(acct(1), 999_845);
    ledger.spent[0] = { keyId: kid("k1"), accountId: acct(1), spent: nanos(155) };
    ledger.stored = 4;
    await node.rebase();
    await node.release(t4, nanos(25), Date.now(), 4, 10);
    await node.release(t4, nanos(25), Date.now(), 4, 10);
    expect(await touched(node, limiters.prefix)).toEqual(countedOnce(155, 360));
  });

  test("after an epoch change: the releases the ledger lacks are sent again in the new epoch, counted once", async () => {
    const ledger = new FakeLedger();
    ledger.balances.set(acct(1), 1_000_000);
    const node = await attached(ledger);
    const t1 = await admitIn(node);
    const t2 = await admitIn(node);
    await node.release(t1, nanos(60), Date.now(), 1, 200);
    await node.release(t2, nanos(40), Date.now(), 2, 100);
    const once = countedOnce(100, 300);
    expect(await touched(node, limiters.prefix)).toEqual(once);

    // Another node moved the ledger's epoch on (it found Redis restarted from its disk, the
    // budgets and token windows kept): this node enters the new epoch and sends records 1 and 2
    // again (the ledger does not hold them yet); the seed counts them from U.
    ledger.epoch += 1;
    await node.rebase();
    expect(node.epoch).toBe(ledger.epoch);
    expect(await touched(node, limiters.prefix)).toEqual(once);
    // A retry in the new epoch, then once more after the ledger stored them and a reseed.
    await node.release(t1, nanos(60), Date.now(), 1, 200);
    expect(await touched(node, limiters.prefix)).toEqual(once);
    ledger.balances.set(acct(1), 999_900);
    ledger.spent.push({ keyId: kid("k1"), accountId: acct(1), spent: nanos(100) });
    ledger.stored = 2;
    await node.rebase();
    await Promise.all([
      node.release(t1, nanos(60), Date.now(), 1, 200),
      node.release(t2, nanos(40), Date.now(), 2, 100),
    ]);
    expect(await touched(node, limiters.prefix)).toEqual(once);
  });
});

describe("what Redis keeps to count a release once in the budgets", () => {
  test("only numbered releases counted in a budget, each kept doneMs (pruned, and the set expires)", async () => {
    const ledger = new FakeLedger();
    ledger.balances.set(acct(1), 1_000_000);
    const doneMs = 300;
    const node = await limiters.make({ heartbeatMs: 3_600_000, epochWatchMs: 3_600_000, doneMs });
    node.attach(ledger);
    await node.rebase();
    const C = new RedisKeys(limiters.prefix).budgetReleases(acct(1));
    const client = new RedisClient(REDIS_URL);
    try {
      const members = async () => (await client.send("ZRANGE", [C, "0", "-1"])) as string[];
      const plain = async () => {
        const result = await node.acquire(limitRequest(Date.now(), { reserve: nanos(100) }));
        if (!result.ok) throw new Error(`refused: ${result.refusal}`);
        return result.ticket;
      };
      // In one script: a release in no budget, one in two budgets, one without a journal number.
      const [t1, t2, t3] = [await plain(), await admitIn(node), await admitIn(node)];
      await Promise.all([
        node.release(t1, nanos(10), Date.now(), 1),
        node.release(t2, nanos(20), Date.now(), 2),
        node.release(t3, nanos(30), Date.now()),
      ]);
      expect(await members()).toEqual(["j1|2"]);
      const ttl = Number(await client.send("PTTL", [C]));
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(doneMs);
      for (const spec of [MONTHLY, DAILY])
        expect(await node.budget(acct(1), spec, Date.now())).toMatchObject({ spent: 50, reserved: 0 });

      // Kept past its expiry (as if releases kept coming), an entry older than doneMs goes with the next one.
      await client.send("PERSIST", [C]);
      const markedAt = Number(await client.send("ZSCORE", [C, "j1|2"]));
      await waitFor("doneMs to pass on Redis's clock", async () => {
        const [s, us] = (await client.send("TIME", [])) as string[];
        return Number(s) * 1000 + Math.floor(Number(us) / 1000) > markedAt + doneMs;
      });
      await node.release(await admitIn(node), nanos(40), Date.now(), 3);
      expect(await members()).toEqual(["j1|3"]);
      await waitFor("the set to expire with no release counted in a budget", async () => {
        return Number(await client.send("EXISTS", [C])) === 0;
      });
    } finally {
      client.close();
    }
  });
});

describe("a reconciliation with tickets counted in budgets", () => {
  test("a reconciliation while a ticket counted in budgets is in flight keeps its key's slot and reservation", async () => {
    const ledger = new FakeLedger();
    ledger.balances.set(acct(1), 1_000_000);
    const node = await attached(ledger);
    const t1 = await admitIn(node);
    await node.rebase();
    expect(await node.snapshot(kid("k1"), acct(1), Date.now())).toMatchObject({
      accountReserved: 100,
      keyReserved: 100,
      inFlight: 1,
    });
    // Every field of the account is the account's or one of its keys' (none named after a budget).
    const client = new RedisClient(REDIS_URL);
    try {
      const fields = (await client.send("HKEYS", [
        new RedisKeys(limiters.prefix).account(acct(1)).account,
      ])) as string[];
      expect(fields.filter((f) => f.includes("\n"))).toEqual([]);
    } finally {
      client.close();
    }
    await node.release(t1, nanos(60), Date.now(), 1, 200);
    expect(await node.snapshot(kid("k1"), acct(1), Date.now())).toMatchObject({
      accountReserved: 0,
      keyReserved: 0,
      inFlight: 0,
    });
  });

  test("the fields an older seed named after a ticket's whole record are dropped by the next seed", async () => {
    const ledger = new FakeLedger();
    ledger.balances.set(acct(1), 1_000_000);
    const node = await attached(ledger);
    await admitIn(node);
    const A = new RedisKeys(limiters.prefix).account(acct(1)).account;
    const client = new RedisClient(REDIS_URL);
    try {
      // As a seed that took the ticket's key and budgets for its key wrote them.
      const stale = `k:k1\n${MONTHLY.name}\n${DAILY.name}:`;
      await client.send("HSET", [
        A,
        `${stale}day`,
        "20000",
        `${stale}spent`,
        "0",
        `${stale}res`,
        "100",
        `${stale}n`,
        "1",
      ]);
      await node.rebase();
      const fields = (await client.send("HKEYS", [A])) as string[];
      expect(fields.filter((f) => f.includes("\n"))).toEqual([]);
    } finally {
      client.close();
    }
    expect(await node.snapshot(kid("k1"), acct(1), Date.now())).toMatchObject({
      accountReserved: 100,
      keyReserved: 100,
      inFlight: 1,
    });
  });
});

describe("Redis restarted from its last snapshot", () => {
  test("the releases sent again in the new epoch count once in the budgets the snapshot kept, and in those it lacked", async () => {
    const dir = mkdtempSync(join(tmpdir(), "modelgate-relbudget-"));
    const redis = await PrivateRedis.start(undefined, { dir });
    const node = await limiters.make({ url: redis.url, heartbeatMs: 3_600_000, epochWatchMs: 3_600_000 });
    try {
      const ledger = new FakeLedger();
      ledger.balances.set(acct(1), 1_000_000);
      node.attach(ledger);
      await node.rebase();
      const t1 = await admitIn(node);
      const t2 = await admitIn(node);
      await node.release(t1, nanos(60), Date.now(), 1, 200);
      await redis.send("SAVE"); // the snapshot holds record 1 in the budgets, not record 2
      await node.release(t2, nanos(40), Date.now(), 2, 100);
      await redis.kill();
      await redis.restart();
      // Another run of Redis: a new epoch, where the node sends records 1 and 2 again (the ledger
      // holds neither) and the seed rebuilds the balance from the ledger and them.
      await waitFor("the node to rebuild Redis in a new epoch", async () => {
        await node.rebase().catch(() => undefined);
        return node.epoch > 1;
      });
      expect(await touched(node, limiters.prefix, redis.url)).toEqual(countedOnce(100, 300));
    } finally {
      await node.close();
      await redis.kill();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
