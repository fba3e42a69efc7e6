// Notifications end to end through the compiled gateway: a webhook channel made with the admin
// API receives a signed announcement and a rate-limited security alert for a revoked key that a
// client keeps using; the deliveries endpoint records both as delivered.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { adminTokenIn, type RunningGateway, startGateway } from "../helpers/gateway.ts";
import { waitFor } from "../helpers/wait.ts";
import { expectedSignature, type Receiver, startReceiver } from "../unit/notify-fixture.ts";

let gw: RunningGateway | undefined;
let token = "";
let receiver: Receiver;

function running(): RunningGateway {
  if (!gw) throw new Error("gateway did not start");
  return gw;
}

async function admin<T>(path: string, json?: unknown): Promise<{ status: number; body: T }> {
  const response = await fetch(`${running().url}/admin/v1${path}`, {
    method: json === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    ...(json === undefined ? {} : { body: JSON.stringify(json) }),
  });
  return { status: response.status, body: (await response.json()) as T };
}

beforeAll(async () => {
  receiver = startReceiver();
  gw = await startGateway({ config: "[admin.notifications]\nalert_interval_seconds = 3600\n" });
  token = adminTokenIn(gw.logs()) ?? "";
}, 60_000);

afterAll(async () => {
  await gw?.dispose();
  receiver.stop();
}, 60_000);

test("webhook channel: signed announcement and one alert for a hammered revoked key", async () => {
  const made = await admin<{ id: number; secret: string; events: string[] }>("/notifications/channels", {
    kind: "webhook",
    url: receiver.url,
    events: ["announcement", "key.security_alert"],
  });
  expect(made.status).toBe(201);
  expect(made.body.secret).toMatch(/^whsec_/);

  const sent = await admin<{ id: string; deliveries: string[] }>("/announcements", {
    title: "Maintenance",
    message: "Restart at 02:00 UTC",
  });
  expect(sent.status).toBe(202);
  expect(sent.body.deliveries.length).toBe(1);
  await waitFor("the announcement delivered", () => receiver.received.length === 1, 20_000);
  const first = receiver.received[0];
  const timestamp = first?.headers.get("modelgate-timestamp") ?? "";
  expect(first?.headers.get("modelgate-signature")).toBe(
    expectedSignature(made.body.secret, timestamp, first?.body ?? ""),
  );
  expect(first?.json).toMatchObject({ id: sent.body.id, type: "announcement", account: null });

  const key = await admin<{ id: string; secret: string }>("/keys", { account: "default", name: "stolen" });
  await waitFor("the new key accepted", async () => (await models(key.body.secret)) === 200, 20_000);
  await admin(`/keys/${key.body.id}/revoke`, {});
  await waitFor("the revoked key refused", async () => (await models(key.body.secret)) === 401, 20_000);
  for (let i = 0; i < 20; i++) expect(await models(key.body.secret)).toBe(401);
  await waitFor("the security alert delivered", () => receiver.received.length >= 2, 20_000);
  // An absence is what is tested: would a second alert come within 500 ms? (it must not: one per
  // key, reason and hour)
  await Bun.sleep(500);
  expect(receiver.received.length).toBe(2);
  expect(receiver.received[1]?.json).toMatchObject({
    type: "key.security_alert",
    account: { name: "default" },
    data: { reason: "revoked_key", key_id: key.body.id, key_name: "stolen", suppressed: 0 },
  });

  const deliveries = await admin<{ data: { event: string; state: string; attempts: number }[] }>(
    "/notifications/deliveries",
  );
  expect(deliveries.body.data.map((d) => [d.event, d.state, d.attempts])).toEqual([
    ["key.security_alert", "delivered", 1],
    ["announcement", "delivered", 1],
  ]);
}, 90_000);

function models(secret: string): Promise<number> {
  return fetch(`${running().url}/v1/models`, { headers: { authorization: `Bearer ${secret}` } }).then(
    async (r) => {
      await r.arrayBuffer();
      return r.status;
    },
  );
}
