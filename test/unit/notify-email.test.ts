// E-mail notifications through a local SMTP sink (smtp-server): envelope, subject, headers and
// the JSON payload in the body; an unreachable SMTP server ends as a failed delivery record.
import { afterEach, beforeEach, expect, test } from "bun:test";
import { KeyCache } from "../../src/auth/keys.ts";
import { parseAddress } from "../../src/base/ip.ts";
import type { AccountId } from "../../src/base/types.ts";
import { UsageFeed } from "../../src/billing/feed.ts";
import { Notifier } from "../../src/notify/notifier.ts";
import type { EventKind } from "../../src/notify/payloads.ts";
import { acct } from "../helpers/ids.ts";
import {
  addKey,
  notificationsConfig,
  openWorld,
  type SmtpSink,
  startSmtpSink,
  type World,
} from "./notify-fixture.ts";

let world: World;
let sink: SmtpSink;
let accountId: AccountId;

beforeEach(async () => {
  world = await openWorld();
  sink = await startSmtpSink();
  accountId = (await world.store.listAccounts())[0]?.id ?? acct(0);
});

afterEach(async () => {
  await sink.stop();
  await world.close();
});

function notifierFor(port: number): Notifier {
  const smtp = { host: "127.0.0.1", port, from: "gateway@example.com" };
  return new Notifier(world.store, notificationsConfig({ smtp, max_attempts: 2, retry_base_ms: 10 }), {
    sleep: async () => {},
  });
}

function emailChannel(events: EventKind[]) {
  return world.store.admin.createChannel({
    accountId: accountId,
    kind: "email",
    target: "ops@example.com",
    secret: null,
    events,
    balanceThreshold: null,
  });
}

/** The raw message with quoted-printable soft line breaks joined, for searching. */
function unfolded(raw: string): string {
  return raw.replace(/=\r?\n/g, "").replace(/=3D/g, "=");
}

test("an announcement arrives as an e-mail with its subject, text and JSON payload", async () => {
  await emailChannel(["announcement"]);
  const notifier = notifierFor(sink.port);
  const sent = await notifier.announce("Maintenance", "The gateway restarts at 02:00 UTC.", null);
  await notifier.idle();
  expect(sink.mails.length).toBe(1);
  const mail = sink.mails[0];
  expect(mail?.from).toBe("gateway@example.com");
  expect(mail?.to).toEqual(["ops@example.com"]);
  const raw = unfolded(mail?.raw ?? "");
  expect(raw).toContain("Subject: [modelgate] Maintenance");
  expect(raw).toContain(`X-Modelgate-Notification: ${sent.id}`);
  expect(raw).toContain("The gateway restarts at 02:00 UTC.");
  expect(raw).toContain('"type": "announcement"');
  const [delivery] = await world.store.admin.listDeliveries(10);
  expect(delivery).toMatchObject({
    event: "announcement",
    state: "delivered",
    attempts: 1,
    lastStatus: null,
  });
  await notifier.stop();
});

test("a key security alert arrives by e-mail naming the key and the reason", async () => {
  await emailChannel(["key.security_alert"]);
  const notifier = notifierFor(sink.port);
  const keys = new KeyCache(world.store);
  notifier.start(new UsageFeed(), keys);
  const { key, secret } = await addKey(world, "laptop");
  await world.store.setKeyStatus(key.id, "revoked");
  await keys.refresh();
  expect(() => keys.authenticate(secret, parseAddress("127.0.0.1"))).toThrow();
  await notifier.idle();
  expect(sink.mails.length).toBe(1);
  const raw = unfolded(sink.mails[0]?.raw ?? "");
  expect(raw).toContain("Subject: [modelgate] Refused request with key laptop: revoked key");
  expect(raw).toContain(`"key_id": "${key.id}"`);
  expect(raw).toContain('"reason": "revoked_key"');
  expect(raw).not.toContain(secret);
  await notifier.stop();
});

test("an unreachable SMTP server ends as a failed delivery after max_attempts", async () => {
  await emailChannel(["announcement"]);
  const port = sink.port;
  await sink.stop();
  sink = await startSmtpSink(); // afterEach stops this one; `port` stays closed
  const notifier = notifierFor(port);
  await notifier.announce("t", "m", null);
  await notifier.idle();
  const [delivery] = await world.store.admin.listDeliveries(10);
  expect(delivery).toMatchObject({ state: "failed", attempts: 2, lastStatus: null });
  expect(delivery?.lastError).toBeTruthy();
  await notifier.stop();
});
