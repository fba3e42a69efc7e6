// The PostgreSQL ledger as the Redis limiter reads it (src/store/pg/limiter-ledger.ts): one id per
// database, an epoch that only moves forward (past what Redis was seen holding), the nodes alive
// by PostgreSQL's clock, and the figures of one snapshot: balances, journal positions, spending.
import { afterAll, expect, test } from "bun:test";
import { join } from "node:path";
import { nanos } from "../../src/base/money.ts";
import { openStore } from "../../src/store/open.ts";
import { tempDir } from "../helpers/gateway.ts";
import { kid } from "../helpers/ids.ts";
import { usageRecord } from "./store-contract.ts";
import { dropPgDatabases, pgDatabase } from "./store-pg-fixture.ts";

afterAll(dropPgDatabases);

test("identity, epochs, nodes alive and the figures of one snapshot", async () => {
  // The journal id files in folders of their own, not in the working directory.
  const store = await openStore(await pgDatabase(), join(tempDir(), "usage.log"));
  const other = await openStore(await pgDatabase(), join(tempDir(), "usage.log"));
  try {
    const ledger = store.limiterLedger?.();
    if (!ledger) throw new Error("a PostgreSQL store has a limiter ledger");
    const first = await ledger.identity();
    expect(first.epoch).toBe(0);
    expect(await ledger.identity()).toEqual(first);
    expect((await other.limiterLedger?.()?.identity())?.ledger).not.toBe(first.ledger);

    const revision = await store.revision();
    expect(await ledger.nextEpoch(0)).toBe(1);
    expect(await ledger.nextEpoch(7)).toBe(8); // past the epoch Redis was seen holding
    expect(await ledger.nextEpoch(2)).toBe(9);
    expect((await ledger.identity()).epoch).toBe(9);
    expect(await store.revision()).toBeGreaterThan(revision); // every node hears of it

    expect(await ledger.beat("node-a", 15_000)).toEqual(["node-a"]);
    expect((await ledger.beat("node-b", 15_000)).sort()).toEqual(["node-a", "node-b"]);
    await ledger.leave("node-a");
    expect(await ledger.beat("node-b", 15_000)).toEqual(["node-b"]);

    const account = await store.createAccount("acme", nanos(10_000));
    await store.usage.commit([usageRecord(account.id, { createdAt: Date.now() })], 1);
    await store.usage.commit(
      [usageRecord(account.id, { requestId: "req_2", createdAt: Date.now() - 3 * 86_400_000 })],
      2,
    );
    const figures = await ledger.figures(Date.now() - 86_400_000);
    expect(figures.balances.get(account.id)).toBe(nanos(8_000));
    expect(figures.journals.get(ledger.journal)).toBe(2);
    expect(figures.spent).toEqual([{ keyId: kid("key_a"), accountId: account.id, spent: nanos(1_000) }]);
  } finally {
    await store.close();
    await other.close();
  }
});
