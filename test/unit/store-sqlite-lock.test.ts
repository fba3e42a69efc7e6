// The SQLite store's write transactions against another connection's write: the gateway, its store
// thread and the CLI all write one file, so a transaction that reads before it writes (a new key
// resolves its account and group first) must wait for the other writer, not fail with SQLITE_BUSY
// because its read snapshot went stale while it waited.
import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { nanos } from "../../src/base/money.ts";
import { openStore } from "../../src/store/open.ts";
import { kid } from "../helpers/ids.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Another process takes the write lock, changes a row and commits `holdMs` later. */
async function holdWriteLock(file: string, holdMs: number): Promise<Bun.Subprocess> {
  const script = `
    const { Database } = require("bun:sqlite");
    const db = new Database(${JSON.stringify(file)});
    db.run("PRAGMA busy_timeout = 5000");
    db.run("BEGIN IMMEDIATE");
    db.run("UPDATE store_meta SET value = value + 1 WHERE name = 'revision'");
    console.log("locked");
    await Bun.sleep(${holdMs});
    db.run("COMMIT");
  `;
  const holder = Bun.spawn([process.execPath, "-e", script], { stdout: "pipe", stderr: "inherit" });
  const reader = holder.stdout.getReader();
  const first = await reader.read();
  expect(new TextDecoder().decode(first.value)).toContain("locked");
  reader.releaseLock();
  return holder;
}

test("a write that reads first waits for another connection's commit instead of failing with SQLITE_BUSY", async () => {
  const dir = mkdtempSync(join(tmpdir(), "modelgate-lock-"));
  dirs.push(dir);
  const file = join(dir, "store.db");
  const store = await openStore(`sqlite://${file}`);
  await store.createAccount("acme", nanos(0));
  await store.setGroup("all", ["*"]);

  const holder = await holdWriteLock(file, 300);
  const key = await store.createKey({
    id: kid("key_lock1"),
    account: "acme",
    group: "all",
    name: "lock",
    prefix: "sk-lock1",
    secretHash: "hash-lock1",
    expiresAt: null,
    allowIps: null,
    dailyCap: null,
    rpm: null,
    concurrency: null,
    tpm: null,
  });
  expect(await holder.exited).toBe(0);
  expect(key).toMatchObject({ id: "key_lock1", account: "acme", group: "all" });
  expect((await store.listKeys()).map((k) => String(k.id))).toContain("key_lock1");
  await store.close();
});
