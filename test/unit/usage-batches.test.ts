// A usage batch is stored once however often it is sent (src/store/usage/batches.ts): the writer
// names each batch and sends the name with every try. On SQLite and PostgreSQL alike: a batch sent
// again under its name — to the same store object (its answer was lost), or to another one on the
// same database (the store thread restarted, or the main thread retrying) — leaves one row and one
// debit per record; settlement rows do not pile up, and those a stopped store left are swept once
// a day old. End to end: a meter without a journal whose store thread exits after committing,
// before replying, retries the batch on the main thread and stores nothing twice.
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import { nanos } from "../../src/base/money.ts";
import { openStore } from "../../src/store/open.ts";
import type { Store } from "../../src/store/store.ts";
import { SETTLE_META, SETTLE_ROW_TTL_MS } from "../../src/store/usage/batches.ts";
import { usageRecord } from "./store-contract.ts";
import { dropPgDatabases, pgDatabase } from "./store-pg-fixture.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
afterAll(dropPgDatabases);

const DIALECTS = [
  {
    name: "SQLite",
    database: async () => {
      const dir = mkdtempSync(join(tmpdir(), "modelgate-batches-"));
      dirs.push(dir);
      return `sqlite://${join(dir, "modelgate.db")}`;
    },
  },
  { name: "PostgreSQL", database: pgDatabase },
];

const CHILD = join(import.meta.dir, "store-thread-exit-child.ts");

/** The settlement rows in the database, by name, read with a connection of the test's own. */
async function settlementRows(url: string): Promise<string[]> {
  const client = new SQL(url);
  try {
    const rows = (await client`SELECT name FROM store_meta WHERE name LIKE ${`${SETTLE_META}%`}
      ORDER BY name`) as { name: string }[];
    return rows.map((row) => row.name);
  } finally {
    await client.close();
  }
}

/** Rows left in store_meta by a store that stopped, written at `at`. */
async function leaveRows(url: string, rows: { name: string; at: number }[]): Promise<void> {
  const client = new SQL(url);
  try {
    for (const row of rows)
      await client`INSERT INTO store_meta (name, value) VALUES (${row.name}, ${row.at})`;
  } finally {
    await client.close();
  }
}

async function ledgerOf(store: Store) {
  const [total] = await store.usage.totals({});
  const [account] = await store.listAccounts();
  const balance: number | undefined = account?.balance;
  return { requests: total?.requests ?? 0, debited: total?.costNanos ?? 0, balance };
}

for (const dialect of DIALECTS) {
  describe(`a usage batch sent again under its name (${dialect.name})`, () => {
    test("is stored once: retried by the same store object, then by a restarted one", async () => {
      const url = await dialect.database();
      const first = await openStore(url);
      const restarted = await openStore(url);
      try {
        const account = await first.createAccount("acme", nanos(10_000));
        const batch = [
          usageRecord(account.id, { requestId: "req_a" }),
          usageRecord(account.id, { requestId: "req_b", createdAt: 1_700_000_000_001 }),
        ];
        const batchId = crypto.randomUUID();
        expect(await first.usage.commit(batch, undefined, batchId)).toEqual(["req_a", "req_b"]);
        // The answer was lost: the writer sends the batch again (a copy, as across the thread boundary).
        expect(await first.usage.commit(structuredClone(batch), undefined, batchId)).toEqual([
          "req_a",
          "req_b",
        ]);
        // The thread died: a new store object (the restarted thread, or the main thread) gets it.
        expect(await restarted.usage.commit(structuredClone(batch), undefined, batchId)).toEqual([
          "req_a",
          "req_b",
        ]);
        expect(await ledgerOf(restarted)).toEqual({ requests: 2, debited: 2_000, balance: 8_000 });
        expect(await restarted.usage.find("req_a~2")).toBeUndefined();
        // The same records in a batch of another name are another settlement (a reused request id).
        expect(await restarted.usage.commit(batch, undefined, crypto.randomUUID())).toEqual([
          "req_a~2",
          "req_b~2",
        ]);
      } finally {
        await first.close();
        await restarted.close();
      }
    });

    test("settlement rows do not pile up; those a stopped store left go once a day old", async () => {
      const url = await dialect.database();
      const first = await openStore(url);
      const later = await openStore(url);
      try {
        const account = await first.createAccount("acme", nanos(10_000));
        const ids = Array.from({ length: 5 }, () => crypto.randomUUID());
        for (const [i, id] of ids.entries()) {
          await first.usage.commit([usageRecord(account.id, { requestId: `req_${i}` })], undefined, id);
        }
        // Each transaction deleted the rows of the batches before it.
        expect(await settlementRows(url)).toEqual([`${SETTLE_META}${ids[4]}`]);
        const now = Date.now();
        await leaveRows(url, [
          { name: `${SETTLE_META}left-old`, at: now - SETTLE_ROW_TTL_MS - 60_000 },
          { name: `${SETTLE_META}left-recent`, at: now - 60_000 },
        ]);
        const id = crypto.randomUUID();
        await later.usage.commit([usageRecord(account.id, { requestId: "req_later" })], undefined, id);
        // A recent row may still have a try on its way; a day-old one cannot.
        expect(await settlementRows(url)).toEqual(
          [`${SETTLE_META}${ids[4]}`, `${SETTLE_META}left-recent`, `${SETTLE_META}${id}`].sort(),
        );
      } finally {
        await first.close();
        await later.close();
      }
    });

    test("end to end: the store thread exits after its commit, before replying; the retry stores nothing twice", async () => {
      const url = await dialect.database();
      const store = await openStore(url);
      try {
        await store.createAccount("acme", nanos(1_000_000_000));
        const child = Bun.spawn([process.execPath, CHILD, url], {
          env: { ...process.env, MODELGATE_TEST_STORE_THREAD_EXIT_AFTER_COMMIT: "1" },
          stdout: "pipe",
          stderr: "pipe",
        });
        const [out, err, code] = await Promise.all([
          new Response(child.stdout).text(),
          new Response(child.stderr).text(),
          child.exited,
        ]);
        expect(code).toBe(0);
        // The thread did die between its commit and its answer, and the batch was retried.
        const logged = err
          .split("\n")
          .filter((line) => line.startsWith("{"))
          .map((line) => JSON.parse(line) as { msg: string });
        expect(logged.map((line) => line.msg)).toContain(
          "usage store thread stopped; it restarts at the next commit",
        );
        expect(logged.map((line) => line.msg)).toContain("usage commit failed");
        const { requestId } = JSON.parse(out.trim().split("\n").at(-1) ?? "{}") as { requestId: string };
        const stored = await store.usage.find(requestId);
        expect(stored).toBeDefined();
        expect(await store.usage.find(`${requestId}~2`)).toBeUndefined();
        expect(await ledgerOf(store)).toEqual({
          requests: 1,
          debited: stored?.costNanos ?? Number.NaN,
          balance: 1_000_000_000 - (stored?.costNanos ?? 0),
        });
      } finally {
        await store.close();
      }
    });
  });
}
