// The Store contract: every implementation (SQLite now, PostgreSQL later) must pass these tests.
import { describe, expect, test } from "bun:test";
import { nanos } from "../../src/billing/money.ts";
import type { NewKey, Store } from "../../src/store/store.ts";
import { StoreError } from "../../src/store/store.ts";
import type { KeyId } from "../../src/types.ts";

let counter = 0;
function newKey(overrides: Partial<NewKey> = {}): NewKey {
  counter++;
  return {
    id: `key_test${counter}` as KeyId,
    account: "acme",
    group: "all",
    name: `k${counter}`,
    prefix: `sk-test${counter}`,
    secretHash: `hash${counter}`,
    expiresAt: null,
    allowIps: null,
    dailyCap: null,
    rpm: null,
    concurrency: null,
    ...overrides,
  };
}

export function storeContract(name: string, open: () => Promise<Store>): void {
  describe(`Store contract: ${name}`, () => {
    test("a new store is empty and migrations can run twice", async () => {
      const store = await open();
      await store.migrate();
      expect(await store.isEmpty()).toBe(true);
      await store.ping();
      await store.close();
    });

    test("accounts: create, credit with a ledger entry, list; names are unique", async () => {
      const store = await open();
      const created = await store.createAccount("acme", nanos(5_000_000_000));
      expect(created.balance).toBe(nanos(5_000_000_000));
      const credited = await store.creditAccount("acme", nanos(250_000_000), "top-up");
      expect(credited.balance).toBe(nanos(5_250_000_000));
      expect((await store.listAccounts()).map((a) => [a.name, a.balance as number])).toEqual([
        ["acme", 5_250_000_000],
      ]);
      await expect(store.createAccount("acme", nanos(0))).rejects.toBeInstanceOf(StoreError);
      await expect(store.creditAccount("nobody", nanos(1), "x")).rejects.toThrow(
        'account "nobody" does not exist',
      );
      expect(await store.isEmpty()).toBe(false);
      await store.close();
    });

    test("groups: set creates or replaces the patterns", async () => {
      const store = await open();
      await store.setGroup("g", ["modelx-*"]);
      await store.setGroup("g", ["modelz-*", "modelx-5.5"]);
      expect((await store.listGroups()).map((g) => [g.name, g.modelPatterns])).toEqual([
        ["g", ["modelz-*", "modelx-5.5"]],
      ]);
      await store.close();
    });

    test("keys: create, list, revoke, enable, and the auth view carries hash and group patterns", async () => {
      const store = await open();
      await store.createAccount("acme", nanos(0));
      await store.setGroup("all", ["*"]);
      const input = newKey({
        allowIps: ["10.0.0.0/8"],
        dailyCap: nanos(1_000_000_000),
        rpm: 60,
        concurrency: 2,
        expiresAt: 4_102_444_800_000,
      });
      const key = await store.createKey(input);
      expect(key).toMatchObject({
        id: input.id,
        account: "acme",
        group: "all",
        status: "enabled",
        allowIps: ["10.0.0.0/8"],
        dailyCap: 1_000_000_000,
        rpm: 60,
        concurrency: 2,
        expiresAt: 4_102_444_800_000,
        lastUsedAt: null,
      });
      expect((await store.setKeyStatus(input.id, "revoked")).status).toBe("revoked");
      expect((await store.setKeyStatus(input.id, "enabled")).status).toBe("enabled");
      const auth = await store.loadAuthKeys();
      expect(auth).toHaveLength(1);
      expect(auth[0]?.secretHash).toBe(input.secretHash);
      expect(auth[0]?.groupModelPatterns).toEqual(["*"]);
      expect((await store.listKeys()).map((k) => k.id)).toEqual([input.id]);
      await expect(store.setKeyStatus("key_missing", "revoked")).rejects.toThrow("does not exist");
      await expect(store.createKey(newKey({ account: "nobody" }))).rejects.toThrow('account "nobody"');
      await expect(store.createKey(newKey({ group: "nogroup" }))).rejects.toThrow('group "nogroup"');
      await store.close();
    });

    test("every change bumps the revision; last-used times do not", async () => {
      const store = await open();
      const start = await store.revision();
      await store.createAccount("acme", nanos(0));
      await store.setGroup("all", ["*"]);
      const input = newKey();
      await store.createKey(input);
      await store.setKeyStatus(input.id, "revoked");
      await store.creditAccount("acme", nanos(1), "x");
      const after = await store.revision();
      expect(after).toBe(start + 5);
      await store.touchKeys(new Map([[input.id, 1_700_000_000_000]]));
      expect(await store.revision()).toBe(after);
      expect((await store.listKeys())[0]?.lastUsedAt).toBe(1_700_000_000_000);
      await store.close();
    });
  });
}
