// The Store contract: every implementation (SQLite now, PostgreSQL later) must pass these tests.
import { describe, expect, test } from "bun:test";
import { nanos } from "../../src/base/money.ts";
import type { NewKey, Store } from "../../src/store/store.ts";
import { StoreError } from "../../src/store/store.ts";
import type { UsageRecord } from "../../src/store/usage/record.ts";
import { acct, kid, mid } from "../helpers/ids.ts";

let counter = 0;
function newKey(overrides: Partial<NewKey> = {}): NewKey {
  counter++;
  return {
    id: kid(`key_test${counter}`),
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
    tpm: null,
    ...overrides,
  };
}

/** A settled request of account `accountId` on key `key_a`, at a fixed time. */
export function usageRecord(accountId: number, overrides: Partial<UsageRecord> = {}): UsageRecord {
  return {
    requestId: "req_1",
    clientRequestId: "client-1",
    keyId: kid("key_a"),
    accountId: acct(accountId),
    model: mid("modelx-1"),
    endpoint: "/v1/chat/completions",
    stream: false,
    status: 200,
    inputTokens: 10,
    cachedInputTokens: 2,
    cacheWriteTokens: 0,
    cacheWrite1hTokens: 0,
    outputTokens: 5,
    reasoningTokens: 1,
    generations: 0,
    costNanos: nanos(1_000),
    usageSource: "reported",
    channels: ["sim", "backup"],
    latencyMs: 42,
    ttfbMs: 7,
    clientAddress: "127.0.0.1",
    endUser: null,
    detail: { quality: "high" },
    createdAt: 1_700_000_000_000,
    ...overrides,
  };
}

/** Usage rows and debit total of the store's only account. */
async function settled(store: Store): Promise<{ requests: number; debited: number; balance: number }> {
  const [total] = await store.usage.totals({});
  const [account] = await store.listAccounts();
  return {
    requests: total?.requests ?? 0,
    debited: total?.costNanos ?? 0,
    balance: account?.balance ?? Number.NaN,
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
      await expect(store.setKeyStatus(kid("key_missing"), "revoked")).rejects.toThrow("does not exist");
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

    test("usage: a settlement is one row and one debit; find gives it back as stored", async () => {
      const store = await open();
      const account = await store.createAccount("acme", nanos(10_000));
      const record = usageRecord(account.id);
      expect(await store.usage.commit([record])).toEqual(["req_1"]);
      expect(await store.usage.find("req_1")).toEqual(record);
      expect(await settled(store)).toEqual({ requests: 1, debited: 1_000, balance: 9_000 });
      expect((await store.usage.balances()).get(account.id)).toBe(nanos(9_000));
      expect(await store.usage.spentByKeySince(0)).toEqual(new Map([[kid("key_a"), nanos(1_000)]]));
      await store.close();
    });

    test("usage: a batch's records read back exactly, whatever their text, JSON, nulls, flags and sizes", async () => {
      const store = await open();
      const account = await store.createAccount("acme", nanos(10_000_000_000_000));
      const records = [
        usageRecord(account.id, {
          requestId: "req_ünï\"cødé'\\",
          clientRequestId: null,
          model: mid('mod"el\\x'),
          stream: true,
          clientAddress: "::1",
          endUser: "line\nbreak 🙂",
          alias: "fast",
          cacheHit: true,
          detail: { nested: { quote: '"', list: [1, 2.5, null], text: "é\u0000" } },
          toolCalls: { web_search: 2 },
          audioMs: 1_500,
          characters: 42,
          costNanos: nanos(5_000_000_000_123),
          ttfbMs: null,
          channels: ["a", "b"],
        }),
        usageRecord(account.id, { requestId: "req_plain", detail: null, endUser: null, clientAddress: null }),
      ];
      // A settlement time from Redis's clock as a node sees it (its offset halfway through a call)
      // has a fraction: stored, to the millisecond.
      const fractional = usageRecord(account.id, {
        requestId: "req_fraction",
        createdAt: 1_700_000_000_000.5,
      });
      expect(await store.usage.commit([fractional])).toEqual(["req_fraction"]);
      expect(
        Math.abs(((await store.usage.find("req_fraction"))?.createdAt ?? 0) - fractional.createdAt),
      ).toBeLessThanOrEqual(0.5);
      expect(await store.usage.commit(records)).toEqual(records.map((r) => r.requestId));
      for (const record of records) expect(await store.usage.find(record.requestId)).toEqual(record);
      expect(await settled(store)).toEqual({
        requests: 3,
        debited: 5_000_000_000_123 + 2_000,
        balance: 10_000_000_000_000 - 5_000_000_000_123 - 2_000,
      });
      await store.close();
    });

    test("usage: a client's text with a NUL or an unpaired surrogate is stored with U+FFFD in their place; the batches after it commit", async () => {
      const store = await open();
      const account = await store.createAccount("acme", nanos(10_000));
      const odd = usageRecord(account.id, {
        requestId: "req_odd_text",
        clientRequestId: "client\u0000id",
        endUser: "a\u0000b\ud800c\udfffd 🙂",
      });
      expect(await store.usage.commit([odd])).toEqual(["req_odd_text"]);
      expect(await store.usage.find("req_odd_text")).toEqual({
        ...odd,
        clientRequestId: "client\uFFFDid",
        endUser: "a\uFFFDb\uFFFDc\uFFFDd 🙂",
      });
      const next = usageRecord(account.id, { requestId: "req_after_odd" });
      expect(await store.usage.commit([next])).toEqual(["req_after_odd"]);
      expect(await settled(store)).toMatchObject({ requests: 2, debited: 2_000 });
      await store.close();
    });

    test("usage: seed figures give each balance and credit total with the revision of the same snapshot", async () => {
      const store = await open();
      const account = await store.createAccount("acme", nanos(10_000));
      const other = await store.createAccount("other", nanos(0));
      expect((await store.usage.seedFigures()).accounts.get(account.id)).toEqual({
        balance: nanos(10_000),
        credited: nanos(0),
      });
      await store.creditAccount("acme", nanos(500), "a");
      await store.creditAccount("acme", nanos(250), "b");
      await store.usage.commit([usageRecord(account.id)]);
      const figures = await store.usage.seedFigures();
      expect(figures.revision).toBe(await store.revision());
      expect(figures.accounts.get(account.id)).toEqual({ balance: nanos(9_750), credited: nanos(750) });
      expect(figures.accounts.get(other.id)).toEqual({ balance: nanos(0), credited: nanos(0) });
      await store.close();
    });

    test("usage: a journaled batch replayed (whole or as the start of a bigger one) bills nothing twice", async () => {
      const store = await open();
      const account = await store.createAccount("acme", nanos(10_000));
      const a = usageRecord(account.id, { requestId: "req_a" });
      const b = usageRecord(account.id, { requestId: "req_b", createdAt: 1_700_000_000_001 });
      const c = usageRecord(account.id, { requestId: "req_c", createdAt: 1_700_000_000_002 });
      await store.usage.commit([a, b], 2);
      await store.usage.commit([a, b], 2);
      expect(await store.usage.journalSeq()).toBe(2);
      expect(await store.usage.commit([a, b, c], 3)).toEqual(["req_a", "req_b", "req_c"]);
      expect(await store.usage.journalSeq()).toBe(3);
      expect(await settled(store)).toEqual({ requests: 3, debited: 3_000, balance: 7_000 });
      await store.close();
    });

    test("usage: another request reusing a stored id is billed as id~2 (its place among the uses)", async () => {
      const store = await open();
      const account = await store.createAccount("acme", nanos(10_000));
      const record = usageRecord(account.id, { requestId: "client_id" });
      expect(await store.usage.commit([record])).toEqual(["client_id"]);
      expect(await store.usage.commit([record])).toEqual(["client_id~2"]);
      expect(await store.usage.commit([record, record])).toEqual(["client_id~3", "client_id~4"]);
      expect((await store.usage.find("client_id~4"))?.costNanos).toBe(nanos(1_000));
      expect(await settled(store)).toEqual({ requests: 4, debited: 4_000, balance: 6_000 });
      await store.close();
    });

    test("usage: totals by model, key and day, filtered by account, key and time", async () => {
      const store = await open();
      const account = await store.createAccount("acme", nanos(10_000));
      await store.createAccount("other", nanos(0));
      const day = 86_400_000;
      await store.usage.commit([
        usageRecord(account.id, { requestId: "r1" }),
        usageRecord(account.id, {
          requestId: "r2",
          model: mid("modelz-2"),
          createdAt: 1_700_000_000_000 + day,
        }),
        usageRecord(account.id, { requestId: "r3", keyId: kid("key_b"), costNanos: nanos(0) }),
      ]);
      const byModel = await store.usage.totals({ account: "acme" }, "model");
      expect(byModel.map((t) => [t.group, t.requests, t.costNanos as number])).toEqual([
        ["modelx-1", 2, 1_000],
        ["modelz-2", 1, 1_000],
      ]);
      const byDay = await store.usage.totals({ keyId: kid("key_a") }, "day");
      expect(byDay.map((t) => [t.group, t.requests])).toEqual([
        ["2023-11-14", 1],
        ["2023-11-15", 1],
      ]);
      const [window] = await store.usage.totals({ since: 1_700_000_000_000, until: 1_700_000_000_001 });
      expect(window).toMatchObject({ group: null, requests: 2, inputTokens: 20, outputTokens: 10 });
      expect(await store.usage.totals({ account: "other" })).toMatchObject([{ requests: 0, costNanos: 0 }]);
      const spending = await store.admin.spending(0);
      expect(spending.byAccount.get(account.id)).toBe(2_000);
      await store.close();
    });

    test("usage: totals sum each priced hosted tool's calls from the records, 0 for a tool never called", async () => {
      const store = await open();
      const account = await store.createAccount("acme", nanos(10_000));
      await store.usage.commit([
        usageRecord(account.id, { requestId: "t1", toolCalls: { web_search: 2 } }),
        usageRecord(account.id, { requestId: "t2", toolCalls: { web_search: 1, web_fetch: 3 } }),
        usageRecord(account.id, {
          requestId: "t3",
          model: mid("modelz-2"),
          toolCalls: { image_generation: 2, code_interpreter: 0 },
        }),
      ]);
      const [total] = await store.usage.totals({});
      expect(total?.toolCalls).toEqual({
        web_search: 3,
        file_search: 0,
        web_fetch: 3,
        image_generation: 2,
        code_interpreter: 0,
      });
      const byModel = await store.usage.totals({}, "model");
      expect(byModel.map((t) => [t.group, t.toolCalls])).toEqual([
        [
          "modelx-1",
          { web_search: 3, file_search: 0, web_fetch: 3, image_generation: 0, code_interpreter: 0 },
        ],
        [
          "modelz-2",
          { web_search: 0, file_search: 0, web_fetch: 0, image_generation: 2, code_interpreter: 0 },
        ],
      ]);
      await store.close();
    });

    test("admin usage aggregates total audio milliseconds and speech characters per bucket", async () => {
      const store = await open();
      const account = await store.createAccount("acme", nanos(10_000));
      await store.usage.commit([
        usageRecord(account.id, { requestId: "a1", model: mid("modelx-transcribe"), audioMs: 61_500 }),
        usageRecord(account.id, { requestId: "a2", model: mid("modelx-transcribe"), audioMs: 2_250 }),
        usageRecord(account.id, { requestId: "s1", model: mid("modelx-tts"), characters: 4_096 }),
        usageRecord(account.id, { requestId: "s2", model: mid("modelx-tts"), characters: 17 }),
        usageRecord(account.id, { requestId: "t1" }),
      ]);
      const byModel = await store.admin.usage("model", { since: 0 });
      expect(byModel.map((r) => [r.bucket, r.requests, r.audioMs, r.characters])).toEqual([
        ["modelx-1", 1, 0, 0],
        ["modelx-transcribe", 2, 63_750, 0],
        ["modelx-tts", 2, 0, 4_113],
      ]);
      expect(await store.admin.usage("day", { since: 0 })).toMatchObject([
        { bucket: "2023-11-14", requests: 5, audioMs: 63_750, characters: 4_113 },
      ]);
      await store.close();
    });

    test("admin: tokens, audit, key edits, usage aggregates, recent requests, channels and deliveries", async () => {
      const store = await open();
      const admin = store.admin;
      const token = await admin.createAdminToken({
        id: "tok_1",
        name: "ops",
        prefix: "mga-1",
        tokenHash: "th1",
      });
      expect(token).toMatchObject({ id: "tok_1", name: "ops", revoked: false });
      expect((await admin.findAdminToken("th1"))?.id).toBe("tok_1");
      expect((await admin.revokeAdminToken("tok_1"))?.revoked).toBe(true);
      expect(await admin.findAdminToken("th1")).toBeUndefined();
      expect((await admin.listAdminTokens()).map((t) => t.id)).toEqual(["tok_1"]);

      await admin.audit("cli", "key.create", "key_x", { rpm: 5 });
      expect(await admin.listAudit(5)).toMatchObject([{ actor: "cli", target: "key_x", detail: { rpm: 5 } }]);

      const account = await store.createAccount("acme", nanos(10_000));
      await store.setGroup("all", ["*"]);
      await store.setGroup("mini", ["modelx-*"]);
      const input = newKey();
      await store.createKey(input);
      expect(await admin.isApiKeyHash(input.secretHash)).toBe(true);
      const before = await store.revision();
      const edited = await admin.updateKey(input.id, { group: "mini", rpm: 7, dailyCap: nanos(500) });
      expect(edited).toMatchObject({ group: "mini", rpm: 7, dailyCap: 500, name: input.name });
      expect(await store.revision()).toBe(before + 1);
      await expect(admin.updateKey(input.id, { group: "none" })).rejects.toThrow('group "none"');

      const day = 86_400_000;
      await store.usage.commit([
        usageRecord(account.id, { requestId: "u1", keyId: input.id }),
        usageRecord(account.id, {
          requestId: "u2",
          keyId: input.id,
          status: 500,
          createdAt: 1_700_000_000_000 + day,
        }),
      ]);
      const byDay = await admin.usage("day", { since: 0 });
      expect(byDay.map((r) => [r.bucket, r.requests, r.errors, r.costNanos])).toEqual([
        ["2023-11-14", 1, 0, 1_000],
        ["2023-11-15", 1, 1, 1_000],
      ]);
      expect(await admin.usage("model", { since: 0, keyId: input.id })).toMatchObject([
        { bucket: "modelx-1", requests: 2, inputTokens: 20, outputTokens: 10 },
      ]);
      expect((await admin.recentRequests({ since: 0 }, 1)).map((r) => r.requestId)).toEqual(["u2"]);
      expect((await admin.spending(0)).byKey.get(input.id)).toBe(2_000);

      const channel = await admin.createChannel({
        accountId: account.id,
        kind: "webhook",
        target: "http://127.0.0.1:9/hook",
        secret: "s",
        events: ["balance.low"],
        balanceThreshold: nanos(100),
      });
      expect(channel).toMatchObject({ enabled: true, events: ["balance.low"], balanceThreshold: 100 });
      expect((await admin.disableChannel(channel.id)).enabled).toBe(false);
      expect((await admin.listChannels()).map((c) => c.id)).toEqual([channel.id]);
      await admin.createDelivery({
        id: "d1",
        channelId: channel.id,
        event: "balance.low",
        payload: { a: 1 },
      });
      await admin.updateDelivery("d1", { state: "failed", attempts: 3, lastStatus: 500, lastError: "boom" });
      expect(await admin.listDeliveries(5, channel.id)).toMatchObject([
        { id: "d1", state: "failed", attempts: 3, lastStatus: 500, payload: { a: 1 } },
      ]);
      await store.close();
    });
  });
}
