// Webhook notifications against a local receiver: the HMAC-SHA256 signature over
// `<timestamp>.<body>` and the exact payload of every event kind, delivery records, retries with
// backoff and their final state, and the rate limit on key security alerts (a moved clock, no sleeps).
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { KeyCache } from "../../src/auth/keys.ts";
import { parseAddress } from "../../src/base/ip.ts";
import type { AccountId, Nanos } from "../../src/base/types.ts";
import { UsageFeed } from "../../src/billing/feed.ts";
import { Notifier } from "../../src/notify/notifier.ts";
import type { EventKind } from "../../src/notify/payloads.ts";
import { verify } from "../../src/notify/webhook.ts";
import { acct } from "../helpers/ids.ts";
import {
  addKey,
  addUsage,
  expectedSignature,
  notificationsConfig,
  openWorld,
  type Receiver,
  startReceiver,
  type World,
} from "./notify-fixture.ts";

const SECRET = "whsec_test_secret_0123456789";
const localhost = parseAddress("127.0.0.1");

let world: World;
let receiver: Receiver;
let clock: number;
let sleeps: number[];
let notifier: Notifier;
let keys: KeyCache;
let accountId: AccountId;

beforeEach(async () => {
  world = await openWorld();
  receiver = startReceiver();
  clock = Date.now();
  sleeps = [];
  accountId = (await world.store.listAccounts())[0]?.id ?? acct(0);
  const config = notificationsConfig({ max_attempts: 3, retry_base_ms: 40, alert_interval_seconds: 60 });
  notifier = new Notifier(world.store, config, {
    now: () => clock,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
  });
  keys = new KeyCache(world.store);
  notifier.start(new UsageFeed(), keys);
});

afterEach(async () => {
  await notifier.stop();
  receiver.stop();
  await world.close();
});

function channel(events: EventKind[], options: { url?: string; threshold?: number } = {}) {
  return world.store.admin.createChannel({
    accountId: accountId,
    kind: "webhook",
    target: options.url ?? receiver.url,
    secret: SECRET,
    events,
    balanceThreshold: (options.threshold ?? null) as Nanos | null,
  });
}

/** Checks the signature scheme on one received request and returns its parsed body. */
function signedBody(index: number) {
  const got = receiver.received[index];
  if (!got) throw new Error(`the receiver got ${receiver.received.length} request(s), not ${index + 1}`);
  const timestamp = got.headers.get("modelgate-timestamp") ?? "";
  expect(timestamp).toMatch(/^\d{10}$/);
  expect(Math.abs(Number(timestamp) - Date.now() / 1000)).toBeLessThan(300);
  const signature = got.headers.get("modelgate-signature") ?? "";
  expect(signature).toBe(expectedSignature(SECRET, timestamp, got.body));
  expect(verify(SECRET, timestamp, got.body, signature)).toBe(true);
  expect(verify(SECRET, timestamp, `${got.body} `, signature)).toBe(false);
  expect(verify("another-secret-of-16+", timestamp, got.body, signature)).toBe(false);
  expect(got.headers.get("content-type")).toBe("application/json");
  expect(got.headers.get("modelgate-event")).toBe(String(got.json.type));
  expect(got.headers.get("modelgate-delivery")).toMatch(/^dlv_[0-9a-f]{16}$/);
  expect(got.json.id).toMatch(/^ntf_[0-9a-f]{16}$/);
  expect(Number.isNaN(Date.parse(String(got.json.created_at)))).toBe(false);
  return got.json;
}

describe("each event kind is signed and carries its payload", () => {
  test("balance.low: under the channel's threshold, once until it recovers", async () => {
    await channel(["balance.low"], { threshold: 20_000_000_000 });
    notifier.balanceChanged(accountId);
    await notifier.check();
    await notifier.idle();
    expect(receiver.received.length).toBe(1);
    expect(signedBody(0)).toMatchObject({
      type: "balance.low",
      account: { id: accountId, name: "acme" },
      data: {
        balance_nanos: 10_000_000_000,
        balance_usd: "10.00",
        threshold_nanos: 20_000_000_000,
        threshold_usd: "20.00",
      },
    });
    notifier.balanceChanged(accountId);
    await notifier.check();
    await notifier.idle();
    expect(receiver.received.length).toBe(1);
    const [delivery] = await world.store.admin.listDeliveries(10);
    expect(delivery).toMatchObject({
      event: "balance.low",
      state: "delivered",
      attempts: 1,
      lastStatus: 200,
    });
  });

  test("quota.daily_cap: 80% then 100%, each once per key and day", async () => {
    await channel(["quota.daily_cap"]);
    const { key } = await addKey(world, "capped", { dailyCap: 1_000_000_000 });
    addUsage(world, key.id, accountId, 850_000_000);
    notifier.balanceChanged(accountId);
    await notifier.check();
    await notifier.idle();
    const day = new Date().toISOString().slice(0, 10);
    const data = { key_id: key.id, key_name: "capped", daily_cap_nanos: 1_000_000_000, day };
    expect(receiver.received.length).toBe(1);
    expect(signedBody(0)).toMatchObject({
      type: "quota.daily_cap",
      account: { id: accountId, name: "acme" },
      data: { ...data, level: 80, spent_today_nanos: 850_000_000 },
    });
    addUsage(world, key.id, accountId, 200_000_000);
    notifier.balanceChanged(accountId);
    await notifier.check();
    await notifier.idle();
    expect(receiver.received.length).toBe(2);
    expect(signedBody(1)).toMatchObject({ data: { ...data, level: 100, spent_today_nanos: 1_050_000_000 } });
    notifier.balanceChanged(accountId);
    await notifier.check();
    await notifier.idle();
    expect(receiver.received.length).toBe(2);
  });

  test("quota.budget: each threshold once per period, for a key's and an account's budgets", async () => {
    await channel(["quota.budget"]);
    const { key } = await addKey(world, "budgeted");
    await world.store.admin.updateKey(key.id, { budgets: { weekly: 1_000_000_000 } });
    await world.store.admin.setAccountBudgets("acme", { total: 2_000_000_000 });
    addUsage(world, key.id, accountId, 850_000_000);
    notifier.balanceChanged(accountId);
    await notifier.check();
    await notifier.idle();
    expect(receiver.received.map((r) => r.json.type)).toEqual(["quota.budget"]);
    expect(signedBody(0)).toMatchObject({
      account: { id: accountId, name: "acme" },
      data: { key_id: key.id, key_name: "budgeted", period: "weekly", level: 80, spent_nanos: 850_000_000 },
    });
    addUsage(world, key.id, accountId, 800_000_000);
    notifier.balanceChanged(accountId);
    await notifier.check();
    await notifier.idle();
    // The key's weekly budget at 100%, the account's total at 80%; nothing twice.
    const later = receiver.received
      .slice(1)
      .map((r) => r.json.data as { key_id: string | null; level: number; period: string });
    expect(
      later.map((d) => `${d.key_id === null ? "account" : "key"} ${d.period} ${d.level}`).sort(),
    ).toEqual(["account total 80", "key weekly 100"]);
    expect(later.find((d) => d.period === "total")).toMatchObject({
      period_end: null,
      budget_nanos: 2_000_000_000,
    });
    notifier.balanceChanged(accountId);
    await notifier.check();
    await notifier.idle();
    expect(receiver.received.length).toBe(3);
  });

  test("quota.budget: a restart does not notify a threshold already notified in the period", async () => {
    await channel(["quota.budget"]);
    const { key } = await addKey(world, "budgeted");
    await world.store.admin.updateKey(key.id, { budgets: { weekly: 1_000_000_000 } });
    addUsage(world, key.id, accountId, 850_000_000);
    notifier.balanceChanged(accountId);
    await notifier.check();
    await notifier.idle();
    expect(receiver.received.map((r) => r.json.type)).toEqual(["quota.budget"]);
    // A new process on the same store: it reads what was sent before and stays quiet.
    const restarted = new Notifier(world.store, notificationsConfig({ max_attempts: 3, retry_base_ms: 40 }));
    restarted.start(new UsageFeed(), keys);
    try {
      restarted.balanceChanged(accountId);
      await restarted.check();
      await restarted.idle();
      expect(receiver.received.length).toBe(1);
      // The next threshold of the period is still notified, once.
      addUsage(world, key.id, accountId, 200_000_000);
      restarted.balanceChanged(accountId);
      await restarted.check();
      await restarted.idle();
      expect(receiver.received.map((r) => (r.json.data as { level: number }).level)).toEqual([80, 100]);
    } finally {
      await restarted.stop();
    }
  });

  test("key.security_alert: revoked key, expired key, refused address", async () => {
    await channel(["key.security_alert"]);
    const revoked = await addKey(world, "old");
    await world.store.setKeyStatus(revoked.key.id, "revoked");
    const expired = await addKey(world, "past", { expiresAt: Date.now() - 60_000 });
    const fenced = await addKey(world, "office", { allowIps: ["10.0.0.0/8"] });
    await keys.refresh();
    for (const { secret } of [revoked, expired, fenced]) {
      expect(() => keys.authenticate(secret, localhost)).toThrow();
    }
    await notifier.idle();
    expect(receiver.received.length).toBe(3);
    const bodies = [0, 1, 2].map(signedBody);
    const cases = [
      [revoked, "revoked_key", "old"],
      [expired, "expired_key", "past"],
      [fenced, "ip_not_allowed", "office"],
    ] as const;
    for (const [made, reason, name] of cases) {
      expect(bodies.find((b) => (b.data as { reason: string }).reason === reason)).toEqual({
        id: expect.any(String),
        type: "key.security_alert",
        created_at: expect.any(String),
        account: { id: accountId, name: "acme" },
        data: {
          reason,
          key_id: made.key.id,
          key_name: name,
          key_prefix: made.key.prefix,
          client_address: "127.0.0.1",
          suppressed: 0,
        },
      });
    }
    expect(receiver.received.map((r) => r.body).join("")).not.toContain(revoked.secret);
  });

  test("announcement: title and message, to every subscribed channel", async () => {
    await channel(["announcement"]);
    await channel(["balance.low"]); // not subscribed: gets nothing
    const sent = await notifier.announce("Maintenance", "The gateway restarts at 02:00 UTC.", null);
    await notifier.idle();
    expect(sent.deliveries.length).toBe(1);
    expect(receiver.received.length).toBe(1);
    expect(signedBody(0)).toEqual({
      id: sent.id,
      type: "announcement",
      created_at: expect.any(String),
      account: null,
      data: { title: "Maintenance", message: "The gateway restarts at 02:00 UTC." },
    });
    expect(receiver.received[0]?.headers.get("modelgate-delivery")).toBe(sent.deliveries[0] ?? "");
  });
});

describe("retries and delivery records", () => {
  test("a failing receiver is retried with doubling backoff until it answers 2xx", async () => {
    await channel(["announcement"]);
    receiver.answers.push(500, 502);
    await notifier.announce("t", "m", null);
    await notifier.idle();
    expect(receiver.received.length).toBe(3);
    // The same signed notification each time.
    expect(new Set(receiver.received.map((r) => r.body)).size).toBe(1);
    expect(sleeps.length).toBe(2);
    expect(sleeps[0]).toBeGreaterThanOrEqual(40);
    expect(sleeps[0]).toBeLessThanOrEqual(48);
    expect(sleeps[1]).toBeGreaterThanOrEqual(80);
    expect(sleeps[1]).toBeLessThanOrEqual(96);
    const [delivery] = await world.store.admin.listDeliveries(10);
    expect(delivery).toMatchObject({ state: "delivered", attempts: 3, lastStatus: 200, lastError: null });
  });

  test("after max_attempts the delivery is recorded as failed with the last answer", async () => {
    await channel(["announcement"]);
    receiver.answers.push(503, 503, 503, 503);
    const pending: string[] = [];
    const check = new Notifier(world.store, notificationsConfig({ max_attempts: 3, retry_base_ms: 10 }), {
      sleep: async () => {
        const [d] = await world.store.admin.listDeliveries(1);
        pending.push(`${d?.state}:${d?.attempts}:${d?.lastStatus}`);
      },
    });
    await check.announce("t", "m", null);
    await check.idle();
    expect(receiver.received.length).toBe(3);
    expect(pending).toEqual(["pending:1:503", "pending:2:503"]);
    const [delivery] = await world.store.admin.listDeliveries(10);
    expect(delivery).toMatchObject({
      event: "announcement",
      state: "failed",
      attempts: 3,
      lastStatus: 503,
      lastError: "receiver answered 503",
    });
    expect(delivery?.payload).toMatchObject({ type: "announcement", data: { title: "t", message: "m" } });
    await check.stop();
  });

  test("an unreachable receiver fails with the connection error and no status", async () => {
    const closed = startReceiver();
    closed.stop();
    await channel(["announcement"], { url: closed.url });
    await notifier.announce("t", "m", null);
    await notifier.idle();
    const [delivery] = await world.store.admin.listDeliveries(10);
    expect(delivery?.state).toBe("failed");
    expect(delivery?.attempts).toBe(3);
    expect(delivery?.lastStatus).toBeNull();
    expect(delivery?.lastError).toBeTruthy();
  });
});

describe("key security alerts are rate-limited", () => {
  test("one alert per key and reason per interval; the next one counts what was held back", async () => {
    await channel(["key.security_alert"]);
    const a = await addKey(world, "a");
    const b = await addKey(world, "b");
    await world.store.setKeyStatus(a.key.id, "revoked");
    await world.store.setKeyStatus(b.key.id, "revoked");
    await keys.refresh();
    const refuse = (secret: string, times: number) => {
      for (let i = 0; i < times; i++) expect(() => keys.authenticate(secret, localhost)).toThrow();
    };
    refuse(a.secret, 50);
    refuse(b.secret, 2);
    await notifier.idle();
    expect(receiver.received.length).toBe(2);
    const first = receiver.received.map((r) => r.json.data as { key_id: string; suppressed: number });
    expect(first.map((d) => [d.key_id, d.suppressed]).sort()).toEqual(
      [
        [a.key.id, 0],
        [b.key.id, 0],
      ].sort(),
    );

    clock += 59_000; // still inside the 60 s interval
    refuse(a.secret, 5);
    await notifier.idle();
    expect(receiver.received.length).toBe(2);

    clock += 2_000; // past it: the next refusal alerts and reports the 54 held back
    refuse(a.secret, 1);
    await notifier.idle();
    expect(receiver.received.length).toBe(3);
    expect(signedBody(2).data).toMatchObject({ key_id: a.key.id, reason: "revoked_key", suppressed: 54 });
  });
});
