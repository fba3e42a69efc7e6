// Change notifications on PostgreSQL: a store watching the revision hears every committed change
// made through another store on the same database (another node, the CLI) — an account credited, a
// group set, a key created, revoked or edited through the admin part — and nothing from a change
// that rolled back; watching stops cleanly.
import { afterAll, expect, test } from "bun:test";
import { nanos } from "../../src/base/money.ts";
import { openStore } from "../../src/store/open.ts";
import { kid } from "../helpers/ids.ts";
import { dropPgDatabases, pgDatabase } from "./store-pg-fixture.ts";

afterAll(dropPgDatabases);

/** Waits until `count()` reaches `n` (notifications arrive asynchronously). */
async function reaches(count: () => number, n: number): Promise<number> {
  for (let i = 0; i < 100 && count() < n; i++) await Bun.sleep(20);
  return count();
}

test("a watching store hears each committed change made by another store, and none that rolled back", async () => {
  const url = await pgDatabase();
  const watcher = await openStore(url);
  const writer = await openStore(url);
  try {
    let heard = 0;
    if (!watcher.watch) throw new Error("the PostgreSQL store must support watch");
    const stop = await watcher.watch(() => heard++);

    await writer.createAccount("acme", nanos(1_000));
    expect(await reaches(() => heard, 1)).toBe(1);
    await writer.creditAccount("acme", nanos(5), "top-up");
    expect(await reaches(() => heard, 2)).toBe(2);
    await writer.setGroup("mini", ["modelx-5.4-mini"]);
    expect(await reaches(() => heard, 3)).toBe(3);
    const key = await writer.createKey({
      id: kid("key_notify1"),
      account: "acme",
      group: "mini",
      name: "n",
      prefix: "sk-notify1",
      secretHash: "hash-notify1",
      expiresAt: null,
      allowIps: null,
      dailyCap: null,
      rpm: null,
      concurrency: null,
      tpm: null,
    });
    expect(await reaches(() => heard, 4)).toBe(4);
    await writer.admin.updateKey(key.id, { rpm: 5 });
    expect(await reaches(() => heard, 5)).toBe(5);
    await writer.setKeyStatus(key.id, "revoked");
    expect(await reaches(() => heard, 6)).toBe(6);

    // A change that fails rolls back, and its notification with it.
    await expect(writer.creditAccount("nobody", nanos(1), "x")).rejects.toThrow('account "nobody"');
    await Bun.sleep(200); // an absence is what is tested: no notification within 200 ms
    expect(heard).toBe(6);
    expect(await watcher.revision()).toBe(await writer.revision());

    await stop();
    await writer.creditAccount("acme", nanos(1), "after stop");
    await Bun.sleep(200); // an absence is what is tested: no notification within 200 ms
    expect(heard).toBe(6);
  } finally {
    await writer.close();
    await watcher.close();
  }
});
