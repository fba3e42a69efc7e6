// Settlement on PostgreSQL when the connection drops right after COMMIT is sent: the server
// commits, the store never hears it. A loopback proxy between the store and PostgreSQL forwards
// the COMMIT, swallows the answer and cuts the connection (and can refuse new connections for a
// while, so the store cannot even ask what happened). Whatever the store does next — confirm,
// retry the same batch, or replay it from the journal inside a bigger one — one row, one debit.
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { SQL } from "bun";
import { nanos } from "../../src/base/money.ts";
import { openStore } from "../../src/store/open.ts";
import type { Store } from "../../src/store/store.ts";
import { tempDir } from "../helpers/gateway.ts";
import { usageRecord } from "./store-contract.ts";
import { CommitCutter, dropPgDatabases, pgDatabase } from "./store-pg-fixture.ts";

afterAll(dropPgDatabases);

let open: { store: Store; cutter: CommitCutter } | undefined;

afterEach(async () => {
  await open?.store.close();
  open?.cutter.stop();
  open = undefined;
});

async function storeBehindCutter() {
  const database = await pgDatabase();
  const url = new URL(database);
  const cutter = new CommitCutter({ hostname: url.hostname, port: Number(url.port || 5432) });
  // The journal (and its id file) in a folder of its own, not in the working directory.
  const store = await openStore(cutter.url(database), join(tempDir(), "usage.log"));
  open = { store, cutter };
  const account = await store.createAccount("acme", nanos(10_000));
  return { store, cutter, accountId: account.id, database };
}

async function ledgerOf(store: Store) {
  const [total] = await store.usage.totals({});
  const [account] = await store.listAccounts();
  const debited: number = total?.costNanos ?? 0;
  const balance: number | undefined = account?.balance;
  return { rows: total?.requests ?? 0, debited, balance };
}

describe("PostgreSQL settlement after a dropped COMMIT", () => {
  test("the store confirms the lost COMMIT by its settlement token: one row, one debit", async () => {
    const { store, cutter, accountId } = await storeBehindCutter();
    cutter.cutNextCommit = true;
    const batch = [usageRecord(accountId, { requestId: "req_lost_answer" })];
    expect(await store.usage.commit(batch)).toEqual(["req_lost_answer"]);
    expect(cutter.cuts).toBe(1);
    expect(await ledgerOf(store)).toEqual({ rows: 1, debited: 1_000, balance: 9_000 });
  });

  test("the writer's retry of the same batch, when the store could not ask, stores nothing twice", async () => {
    const { store, cutter, accountId } = await storeBehindCutter();
    cutter.cutNextCommit = true;
    // Refuse the confirmation the store tries after the cut.
    cutter.refuseAfterCut = true;
    const batch = [usageRecord(accountId, { requestId: "req_retried" })];
    // The writer names the batch and sends the name with each try (a copy of the records, as
    // after crossing to the store thread).
    const batchId = crypto.randomUUID();
    const attempt = store.usage.commit(batch, undefined, batchId);
    await expect(attempt).rejects.toThrow();
    expect(cutter.cuts).toBe(1);
    cutter.refuseAfterCut = false;
    cutter.refuse = false;
    expect(await store.usage.commit(structuredClone(batch), undefined, batchId)).toEqual(["req_retried"]);
    expect(await store.usage.commit(structuredClone(batch), undefined, batchId)).toEqual(["req_retried"]);
    expect(await ledgerOf(store)).toEqual({ rows: 1, debited: 1_000, balance: 9_000 });
    expect(await store.usage.find("req_retried~2")).toBeUndefined();
  });

  test("settlement tokens do not pile up: each commit deletes the tokens of the batches before it", async () => {
    const { store, accountId, database } = await storeBehindCutter();
    for (let i = 0; i < 5; i++) await store.usage.commit([usageRecord(accountId, { requestId: `t${i}` })]);
    const client = new SQL({ url: database, max: 1 });
    const [row] = (await client`SELECT count(*)::int AS n FROM store_meta WHERE name LIKE 'settle:%'`) as {
      n: number;
    }[];
    await client.close();
    expect(row?.n).toBe(1);
  });

  test("a journaled batch replayed inside a bigger one after the cut stores each record once", async () => {
    const { store, cutter, accountId } = await storeBehindCutter();
    const a = usageRecord(accountId, { requestId: "req_a" });
    const b = usageRecord(accountId, { requestId: "req_b" });
    cutter.cutNextCommit = true;
    cutter.refuseAfterCut = true;
    const attempt = store.usage.commit([a], 1);
    await expect(attempt).rejects.toThrow();
    cutter.refuseAfterCut = false;
    cutter.refuse = false;
    // The writer takes the oldest logged records again, now with one more (a new array).
    expect(await store.usage.commit([a, b], 2)).toEqual(["req_a", "req_b"]);
    expect(await store.usage.journalSeq()).toBe(2);
    expect(await ledgerOf(store)).toEqual({ rows: 2, debited: 2_000, balance: 8_000 });
  });
});

describe("PostgreSQL store shared by several nodes", () => {
  test("nodes starting at once on an empty database migrate it once", async () => {
    const database = await pgDatabase();
    const dir = tempDir();
    const nodes = await Promise.all(
      [0, 1, 2].map((i) => openStore(database, join(dir, `node${i}-usage.log`))),
    );
    try {
      await nodes[0]?.createAccount("acme", nanos(1));
      for (const node of nodes) expect((await node.listAccounts()).map((a) => a.name)).toEqual(["acme"]);
    } finally {
      for (const node of nodes) await node.close();
    }
  });

  test("three nodes settling the same accounts at once: every debit lands once, balances exact", async () => {
    const database = await pgDatabase();
    const dir = tempDir();
    const nodes = await Promise.all(
      [0, 1, 2].map((i) => openStore(database, join(dir, `node${i}-usage.log`))),
    );
    try {
      const a = await nodes[0]?.createAccount("a", nanos(1_000_000));
      const b = await nodes[0]?.createAccount("b", nanos(1_000_000));
      if (a === undefined || b === undefined) throw new Error("accounts not created");
      // Each node's batches touch both accounts, in opposite orders on alternate nodes; each node
      // numbers its own journal, and every batch is committed twice (a replay).
      await Promise.all(
        nodes.map(async (node, n) => {
          for (let batch = 1; batch <= 10; batch++) {
            const records = [a.id, b.id, a.id].map((accountId, i) =>
              usageRecord(n % 2 === 0 ? accountId : accountId === a.id ? b.id : a.id, {
                requestId: `n${n}b${batch}r${i}`,
                costNanos: nanos(10 + i),
              }),
            );
            await node.usage.commit(records, batch * 3);
            await node.usage.commit(records, batch * 3);
          }
        }),
      );
      const [total] = (await nodes[1]?.usage.totals({})) ?? [];
      expect(total).toMatchObject({ requests: 90, costNanos: 3 * 10 * (10 + 11 + 12) });
      const balances = await nodes[2]?.usage.balances();
      const spent = 2_000_000 - ((balances?.get(a.id) ?? 0) + (balances?.get(b.id) ?? 0));
      expect(spent).toBe(3 * 10 * (10 + 11 + 12));
      for (const node of nodes) expect(await node.usage.journalSeq()).toBe(30);
    } finally {
      for (const node of nodes) await node.close();
    }
  });
});
