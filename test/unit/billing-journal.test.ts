// The usage journal: the durable step of a settlement when the store is a file. Lines round-trip,
// a torn last line is skipped, one running process owns a journal, and a restart stores exactly
// the records the store had not received — none twice, none lost, balances included. The store
// thread commits journal lines (or plain records) with their number, writes keys' last-used times,
// starts again after it stopped, and an open that fails says why.
import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as v from "valibot";
import { createKey } from "../../src/admin/keys.ts";
import type { Nanos } from "../../src/base/types.ts";
import { UsageFeed } from "../../src/billing/feed.ts";
import { Journal } from "../../src/billing/journal.ts";
import { LedgerMeter, STORE_BATCH, STORE_THREAD_BATCH } from "../../src/billing/ledger.ts";
import { StoreThread } from "../../src/billing/store-thread.ts";
import { BillingSchema } from "../../src/config/prices.ts";
import { openSqliteStore } from "../../src/store/sqlite/store.ts";
import type { UsageRecord } from "../../src/store/usage/record.ts";
import { acct, kid, mid } from "../helpers/ids.ts";
import { admitInput, principalOf, usage, usd } from "./billing-fixture.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "modelgate-journal-"));
  dirs.push(dir);
  return dir;
}

/** A migrated SQLite store in a fresh folder with one account holding `balance` USD, and its paths. */
async function storeWithAccount(balance: string) {
  const dir = tempDir();
  const dbPath = join(dir, "modelgate.db");
  const store = openSqliteStore(dbPath);
  await store.migrate();
  const account = await store.createAccount("acme", usd(balance));
  return { dir, dbPath, journalPath: `${dbPath}-usage.log`, store, account };
}

function record(i: number, accountId: number, cost: number): UsageRecord {
  return {
    requestId: `req_journal_${i}`,
    clientRequestId: null,
    keyId: kid("key_test"),
    accountId: acct(accountId),
    model: mid("modelx-5.5"),
    endpoint: "/v1/chat/completions",
    stream: false,
    status: 200,
    inputTokens: 10,
    cachedInputTokens: 0,
    cacheWriteTokens: 0,
    cacheWrite1hTokens: 0,
    outputTokens: 5,
    reasoningTokens: 0,
    generations: 0,
    costNanos: cost as Nanos,
    usageSource: "reported",
    channels: ["sim"],
    latencyMs: 1,
    ttfbMs: null,
    clientAddress: null,
    endUser: null,
    detail: i % 2 === 0 ? { note: "tab\tand newline\n survive" } : null,
    createdAt: 1_777_000_000_000 + i,
  };
}

test("entries round-trip with their sequence numbers; a torn last line is skipped", () => {
  const path = join(tempDir(), "usage.log");
  const journal = Journal.open<UsageRecord>(path);
  if (!journal) throw new Error("journal not opened");
  journal.restart(41);
  expect(journal.append([record(1, 1, 10), record(2, 1, 20)])).toBe(43);
  expect(journal.append([record(3, 1, 30)])).toBe(44);
  writeFileSync(path, `${readFileSync(path, "utf8")}45\t{"requestId":"req_tor`);
  const entries = journal.entries();
  expect(entries.map((e) => e.seq)).toEqual([42, 43, 44]);
  expect(entries[1]?.item).toEqual(record(2, 1, 20));
  journal.clear();
  expect(journal.entries()).toEqual([]);
  journal.close();
});

test("appends encode as UTF-8 whatever their size: each line's bytes and its range in the file agree", () => {
  const path = join(tempDir(), "usage.log");
  const journal = Journal.open<UsageRecord>(path);
  if (!journal) throw new Error("journal not opened");
  // Two-, three- and four-byte characters, then a batch too large for the reused buffer (over
  // 1 MiB as UTF-16 units times 3), then a small one again in the reused buffer.
  const wide = { ...record(1, 1, 10), user: "é漢字😀".repeat(50) };
  const huge = { ...record(2, 1, 20), user: "ü".repeat(400_000) };
  const small = record(3, 1, 30);
  const sizes: number[] = [];
  for (const item of [wide, huge, small]) {
    const before = readFileSync(path).length;
    journal.append([item]);
    const range = journal.lastRange;
    expect(range).toEqual({ path, from: before, to: readFileSync(path).length });
    sizes.push((range?.to ?? 0) - (range?.from ?? 0));
  }
  expect(sizes).toEqual(
    [wide, huge, small].map((item, i) => Buffer.byteLength(`${i + 1}\t${JSON.stringify(item)}\n`)),
  );
  expect(journal.entries().map((e) => e.item)).toEqual([wide, huge, small]);
});

test("a large journal is compacted to the lines the store lacks, and numbering goes on", () => {
  const path = join(tempDir(), "usage.log");
  const journal = Journal.open<UsageRecord>(path);
  if (!journal) throw new Error("journal not opened");
  // Small: compaction waits (the file is emptied when the store catches up).
  journal.append([record(0, 1, 10)]);
  expect(journal.compact(1, journal.lastRange?.from ?? 0)).toBe(false);
  expect(journal.entries().length).toBe(1);
  for (let i = 1; i <= 3_000; i++) journal.append([record(i, 1, 10)]);
  const last = journal.append([record(3_001, 1, 10), record(3_002, 1, 10)]);
  expect(readFileSync(path).length).toBeGreaterThan(1 << 20);
  // A store far behind (most lines unstored) is not made to rewrite them.
  expect(journal.compact(2_000, 0)).toBe(false);
  expect(journal.entries().length).toBe(3_003);
  const unstored = journal.lastRange?.from ?? 0;
  expect(journal.compact(2, unstored)).toBe(true);
  expect(journal.entries().map((e) => e.seq)).toEqual([last - 1, last]);
  expect(journal.append([record(3_003, 1, 10)])).toBe(last + 1);
  expect(journal.entries().map((e) => e.item.requestId)).toEqual([
    "req_journal_3001",
    "req_journal_3002",
    "req_journal_3003",
  ]);
  journal.close();
});

test("a journal is owned by one running process; a lock left by a process that is gone is taken over", async () => {
  const path = join(tempDir(), "usage.log");
  const sleeper = Bun.spawn(["sleep", "30"]);
  try {
    writeFileSync(`${path}.pid`, String(sleeper.pid));
    expect(Journal.open(path)).toBeUndefined();
  } finally {
    sleeper.kill();
    await sleeper.exited;
  }
  const gone = Journal.open(path);
  expect(gone).toBeDefined();
  expect(readFileSync(`${path}.pid`, "utf8")).toBe(String(process.pid));
  gone?.close();
});

test("a restart stores exactly the journal records the store had not received, with their debits", async () => {
  const { journalPath, store, account } = await storeWithAccount("100");
  const records = Array.from({ length: 10 }, (_, i) => record(i, account.id, 1_000 * (i + 1)));

  // The crashed process: all ten logged, the first four already stored with their number.
  const crashed = Journal.open<UsageRecord>(journalPath);
  if (!crashed) throw new Error("journal not opened");
  crashed.append(records);
  await store.usage.commit(records.slice(0, 4), 4);
  crashed.close(); // its fd and lock go with the process

  const billing = v.parse(BillingSchema, {});
  const meter = new LedgerMeter({ store, feed: new UsageFeed(), billing, pollMs: 0, journalPath });
  await meter.start();
  for (const r of records) expect((await store.usage.find(r.requestId))?.costNanos).toBe(r.costNanos);
  const total = records.reduce((sum, r) => sum + r.costNanos, 0) as Nanos;
  expect((await store.usage.balances()).get(account.id)).toBe((usd("100") - total) as Nanos);
  expect(await store.usage.journalSeq()).toBe(10);
  expect(readFileSync(journalPath, "utf8")).toBe("");
  const stored = (await store.usage.totals({}))[0];
  expect(stored?.requests).toBe(10);

  // A second restart finds nothing to replay and stores nothing twice.
  await meter.close();
  const again = new LedgerMeter({ store, feed: new UsageFeed(), billing, pollMs: 0, journalPath });
  await again.start();
  expect((await store.usage.totals({}))[0]?.requests).toBe(10);
  await again.close();
  await store.close();
});

test("a journal line that is not a usage record is set aside; the gateway starts and stores the others", async () => {
  const { journalPath, store, account } = await storeWithAccount("100");
  const [first, last] = [record(1, account.id, 1_000), record(3, account.id, 3_000)];
  // Another version's line, or a hand edit: JSON, but not a record (a failed replay stopped every start).
  const stray = JSON.stringify({ requestId: "req_journal_2", costNanos: 2_000 });
  // An earlier version's record: without the fields added since, which the stores default.
  const { cacheWriteTokens, cacheWrite1hTokens, ttfbMs, endUser, detail, ...earlier } = record(
    4,
    account.id,
    4_000,
  );
  writeFileSync(
    journalPath,
    [first, stray, last, earlier]
      .map((r, i) => `${i + 1}\t${typeof r === "string" ? r : JSON.stringify(r)}\n`)
      .join(""),
  );

  const meter = new LedgerMeter({
    store,
    feed: new UsageFeed(),
    billing: v.parse(BillingSchema, {}),
    pollMs: 0,
    journalPath,
  });
  await meter.start();
  expect((await store.usage.find(first.requestId))?.costNanos).toBe(first.costNanos);
  expect((await store.usage.find(last.requestId))?.costNanos).toBe(last.costNanos);
  expect(await store.usage.find("req_journal_2")).toBeUndefined();
  expect((await store.usage.find(earlier.requestId))?.cacheWriteTokens).toBe(0);
  expect((await store.usage.balances()).get(account.id)).toBe((usd("100") - 8_000) as Nanos);
  expect(await store.usage.journalSeq()).toBe(4);
  expect(readFileSync(`${journalPath}.rejected`, "utf8")).toBe(`2\t${stray}\n`);
  await meter.close();
  await store.close();
});

test("journal lines and plain records are committed on the thread, each batch once, with its number", async () => {
  const { dir, dbPath, store, account } = await storeWithAccount("1");
  const journal = Journal.open<UsageRecord>(join(dir, "usage.log"));
  if (!journal) throw new Error("journal not opened");
  const thread = await StoreThread.open(`sqlite://${dbPath}`);
  try {
    const logged = [record(0, account.id, 1_000), record(1, account.id, 2_000)];
    const upTo = journal.append(logged);
    await thread.commit(logged, upTo, journal.lastRange);
    // The same lines again (a retry after a lost answer): the journal number makes it a no-op.
    await thread.commit(logged, upTo, journal.lastRange);
    await thread.commit([record(2, account.id, 3_000)]);
    for (const r of [...logged, record(2, account.id, 3_000)]) {
      expect(await store.usage.find(r.requestId)).toEqual(r);
    }
    expect(await store.usage.journalSeq()).toBe(2);
    expect((await store.usage.balances()).get(account.id)).toBe((usd("1") - 6_000) as Nanos);

    // Stopped (as a crashed worker would be), the thread starts again at the next commit.
    await thread.close();
    await thread.commit([record(3, account.id, 4_000)]);
    expect((await store.usage.find("req_journal_3"))?.costNanos).toBe(4_000 as Nanos);

    await store.setGroup("text", ["*"]);
    const unlimited = {
      expiresAt: null,
      allowIps: [],
      dailyCap: null,
      rpm: null,
      concurrency: null,
      tpm: null,
    };
    const { key: created } = await createKey(store, {
      account: "acme",
      group: "text",
      name: "k",
      ...unlimited,
    });
    await thread.touchKeys(new Map([[created.id, 1_777_000_123_000]]));
    expect((await store.listKeys()).find((k) => k.id === created.id)?.lastUsedAt).toBe(1_777_000_123_000);
  } finally {
    await thread.close();
    journal.close();
    await store.close();
  }
});

test("commits made on the event loop (the store thread not ready) keep to its batch size; the thread's are larger", async () => {
  const { dir, store, account } = await storeWithAccount("100");
  const here: number[] = [];
  const commit = store.usage.commit.bind(store.usage);
  store.usage.commit = (records, seq, batchId) => {
    here.push(records.length);
    return commit(records, seq, batchId);
  };
  // A thread that is not ready until the test says so, committing through the same store.
  const onThread: number[] = [];
  const thread = {
    ready: false,
    start() {},
    commit(records: readonly UsageRecord[], seq?: number, _lines?: string, batchId?: string) {
      onThread.push(records.length);
      return commit(records, seq, batchId);
    },
    async close() {},
  };
  const meter = new LedgerMeter({
    store,
    feed: new UsageFeed(),
    billing: v.parse(BillingSchema, {}),
    pollMs: 0,
    journalPath: join(dir, "usage.log"),
    thread: thread as unknown as StoreThread,
  });
  await meter.start();
  const principal = principalOf(account);
  const settleMany = async (n: number) => {
    const worst = { kind: "text", inputTokens: 10, maxOutputTokens: 10 } as const;
    const admitted = await Promise.all(
      Array.from({ length: n }, () => meter.admit(admitInput(principal, "modelx-5.4-mini", worst))),
    );
    await Promise.all(
      admitted.map((a) =>
        a.settle({
          status: 200,
          usage: usage({ inputTokens: 10, outputTokens: 10 }),
          source: "reported",
          channels: [],
        }),
      ),
    );
    await meter.flush();
  };
  try {
    await settleMany(600);
    expect(here.reduce((a, b) => a + b, 0)).toBe(600);
    expect(Math.max(...here)).toBe(STORE_BATCH);
    thread.ready = true;
    await settleMany(1_200);
    expect(onThread.reduce((a, b) => a + b, 0)).toBe(1_200);
    expect(Math.max(...onThread)).toBe(STORE_THREAD_BATCH);
  } finally {
    await meter.close();
    await store.close();
  }
});

test("a store the thread cannot open fails the open with the store's reason", async () => {
  await expect(StoreThread.open("postgres://nobody@127.0.0.1:1/nothing")).rejects.toThrow("PostgreSQL");
});
