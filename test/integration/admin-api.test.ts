// The admin API end to end against the compiled binary: token checks, key life cycle, credit,
// audit, and the live event feed delivering a record per proxied request.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { adminTokenIn, type RunningGateway, startGateway } from "../helpers/gateway.ts";
import { waitFor } from "../helpers/wait.ts";

let gw: RunningGateway | undefined;
let token: string;

function admin(path: string, init: RequestInit & { json?: unknown } = {}, auth = token) {
  const { json, ...rest } = init;
  return fetch(`${running().url}/admin/v1${path}`, {
    ...rest,
    headers: { authorization: `Bearer ${auth}`, "content-type": "application/json" },
    ...(json === undefined ? {} : { method: rest.method ?? "POST", body: JSON.stringify(json) }),
  });
}

function running(): RunningGateway {
  if (!gw) throw new Error("gateway did not start");
  return gw;
}

beforeAll(async () => {
  gw = await startGateway();
  const found = adminTokenIn(gw.logs());
  if (!found) throw new Error(`no admin token printed at bootstrap:\n${gw.logs()}`);
  token = found;
}, 60_000);

afterAll(async () => {
  await gw?.dispose();
}, 60_000);

describe("admin token", () => {
  test("401 without a token, 401 with a wrong one, 403 with an API key", async () => {
    const none = await fetch(`${running().url}/admin/v1/keys`);
    expect(none.status).toBe(401);
    expect(((await none.json()) as { error: { code: string } }).error.code).toBe("missing_admin_token");
    expect((await admin("/keys", {}, "mga-wrong")).status).toBe(401);
    const apiKey = await admin("/keys", {}, running().key ?? "");
    expect(apiKey.status).toBe(403);
    const refused = ((await apiKey.json()) as { error: { type: string; code: string } }).error;
    expect(refused).toMatchObject({ type: "permission_error", code: "admin_token_required" });
  }, 60_000);

  test("`modelgate admin token create` mints a working token", async () => {
    const made = await running().cli(["admin", "token", "create", "--name", "script"]);
    expect(made.code).toBe(0);
    const minted = made.stdout.trim();
    expect(minted).toMatch(/^mga-[A-Za-z0-9_-]{43}$/);
    expect((await admin("/accounts", {}, minted)).status).toBe(200);
  }, 60_000);
});

describe("keys", () => {
  test("create (secret once), limits, revoke, enable: each reaches the gateway and the audit log", async () => {
    const created = await admin("/keys", { json: { account: "default", name: "ci", daily_cap_usd: "2.5" } });
    expect(created.status).toBe(201);
    const key = (await created.json()) as {
      id: string;
      secret: string;
      daily_cap_nanos: number;
      status: string;
    };
    expect(key.secret).toMatch(/^sk-/);
    expect(key.daily_cap_nanos).toBe(2_500_000_000);
    const listed = (await (await admin("/keys?name=ci")).json()) as { data: Record<string, unknown>[] };
    expect(listed.data.map((k) => k.id)).toEqual([key.id]);
    expect(listed.data[0]?.secret).toBeUndefined();

    const models = () =>
      fetch(`${running().url}/v1/models`, { headers: { authorization: `Bearer ${key.secret}` } });
    await waitFor("GET /v1/models to answer 200", async () => (await models()).status === 200);

    const limited = await admin(`/keys/${key.id}`, { json: { allow_ips: ["10.0.0.0/8"], rpm: 30 } });
    expect(((await limited.json()) as { allow_ips: string[]; rpm: number }).allow_ips).toEqual([
      "10.0.0.0/8",
    ]);
    await waitFor("GET /v1/models to answer 403", async () => (await models()).status === 403);
    await admin(`/keys/${key.id}`, { json: { allow_ips: null } });
    await waitFor("GET /v1/models to answer 200", async () => (await models()).status === 200);

    const revoked = await admin(`/keys/${key.id}/revoke`, { method: "POST" });
    expect(((await revoked.json()) as { status: string }).status).toBe("revoked");
    await waitFor("GET /v1/models to answer 401", async () => (await models()).status === 401);
    await admin(`/keys/${key.id}/enable`, { method: "POST" });
    await waitFor("GET /v1/models to answer 200", async () => (await models()).status === 200);

    const audit = (await (await admin("/audit")).json()) as {
      data: { action: string; target: string; actor: string; detail: Record<string, unknown> | null }[];
    };
    // Newest first, in the order the changes were made above: create, two updates, revoke, enable.
    const mine = audit.data.filter((a) => a.target === key.id);
    expect(mine.map((a) => a.action)).toEqual([
      "key.enable",
      "key.revoke",
      "key.update",
      "key.update",
      "key.create",
    ]);
    expect(mine[2]?.detail).toEqual({ allow_ips: null });
    expect(mine[3]?.detail).toEqual({ allow_ips: ["10.0.0.0/8"], rpm: 30 });
    expect(audit.data[0]?.actor).toMatch(/^admin:adm_[0-9a-f]{16}:bootstrap$/);
  }, 60_000);

  test("update: group, daily cap, rpm, concurrency, expiry; each reaches the gateway", async () => {
    await admin("/groups/mini-only", { json: { models: ["modelx-5.4-mini"] } });
    const created = await admin("/keys", { json: { account: "default", name: "upd" } });
    const key = (await created.json()) as { id: string; secret: string };
    const chat = (model: string) =>
      fetch(`${running().url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key.secret}`, "content-type": "application/json" },
        body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] }),
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as { error?: { code: string } } }));
    await waitFor("modelx-5.5 to answer 200", async () => (await chat("modelx-5.5")).status === 200);

    const expires = new Date(Date.now() + 3_000).toISOString();
    const changed = await admin(`/keys/${key.id}`, {
      json: { group: "mini-only", daily_cap_usd: 4, rpm: 7, concurrency: 2, expires_at: expires },
    });
    expect(changed.status).toBe(200);
    expect(await changed.json()).toMatchObject({
      id: key.id,
      group: "mini-only",
      daily_cap_nanos: 4_000_000_000,
      rpm: 7,
      concurrency: 2,
      expires_at: expires,
      status: "enabled",
    });
    // The new group refuses a model outside it; the expiry then turns the key away.
    await waitFor("modelx-5.5 to answer 403", async () => (await chat("modelx-5.5")).status === 403);
    await waitFor(
      "the key to be expired",
      async () => (await chat("modelx-5.4-mini")).body.error?.code === "expired_api_key",
      20_000,
    );
    const expired = (await (await admin(`/keys/${key.id}`)).json()) as { status: string };
    expect(expired.status).toBe("expired");

    const cleared = await admin(`/keys/${key.id}`, {
      json: { expires_at: null, daily_cap_usd: null, rpm: null, concurrency: null },
    });
    expect(await cleared.json()).toMatchObject({
      status: "enabled",
      expires_at: null,
      daily_cap_nanos: null,
      rpm: null,
      concurrency: null,
      group: "mini-only",
    });
    await waitFor(
      "modelx-5.4-mini to answer 200",
      async () => (await chat("modelx-5.4-mini")).status === 200,
    );

    const past = await admin(`/keys/${key.id}`, { json: { expires_at: "2001-01-01T00:00:00Z" } });
    expect(past.status).toBe(400);
    expect(((await past.json()) as { error: { param: string } }).error.param).toBe("expires_at");
    const noGroup = await admin(`/keys/${key.id}`, { json: { group: "nope" } });
    expect(noGroup.status).toBe(404);
  }, 60_000);

  test("bad input gets field-named errors and changes nothing", async () => {
    const before = ((await (await admin("/keys")).json()) as { data: unknown[] }).data.length;
    const bad = await admin("/keys", { json: { account: "default", rpm: 0, allow_ips: ["nope"], extra: 1 } });
    expect(bad.status).toBe(400);
    const error = ((await bad.json()) as { error: { message: string; param: string } }).error;
    expect(error.message).toContain("rpm:");
    expect(error.message).toContain("allow_ips[0]:");
    expect(error.message).toContain("extra: unknown field");
    expect(((await (await admin("/keys")).json()) as { data: unknown[] }).data.length).toBe(before);
    expect((await admin("/keys/key_nope/revoke", { method: "POST" })).status).toBe(404);
  }, 60_000);
});

describe("accounts", () => {
  test("create and credit with a note; the balance shows it", async () => {
    const made = await admin("/accounts", { json: { name: "acme", balance_usd: "1" } });
    expect(made.status).toBe(201);
    // The balance endpoint, called with a key of the account.
    const key = (await (await admin("/keys", { json: { account: "acme", name: "acme-app" } })).json()) as {
      secret: string;
    };
    const balance = async () => {
      const r = await fetch(`${running().url}/v1/dashboard/billing/balance`, {
        headers: { authorization: `Bearer ${key.secret}` },
      });
      return r.status === 200 ? ((await r.json()) as { account: string; balance_nanos: number }) : undefined;
    };
    await waitFor("a balance of $1", async () => (await balance())?.balance_nanos === 1_000_000_000);
    const credited = await admin("/accounts/acme/credit", {
      json: { amount_usd: "2.25", note: "invoice 7" },
    });
    expect(((await credited.json()) as { balance_nanos: number }).balance_nanos).toBe(3_250_000_000);
    const list = (await (await admin("/accounts")).json()) as {
      data: { name: string; balance_usd: string }[];
    };
    expect(list.data.find((a) => a.name === "acme")?.balance_usd).toBe("3.25");
    await waitFor("a balance of $3.25", async () => (await balance())?.balance_nanos === 3_250_000_000);
    expect((await balance())?.account).toBe("acme");
    const noNote = await admin("/accounts/acme/credit", { json: { amount_usd: "1" } });
    expect(noNote.status).toBe(400);
  }, 60_000);

  test("groups: set models", async () => {
    const set = await admin("/groups/cheap", { json: { models: ["modelx-5.4-mini"] } });
    expect(await set.json()).toMatchObject({ name: "cheap", models: ["modelx-5.4-mini"] });
  }, 60_000);
});

describe("event feed", () => {
  test("delivers one record per proxied request, and usage aggregates count them", async () => {
    const feed = await admin("/events");
    expect(feed.headers.get("content-type")).toContain("text/event-stream");
    const reader = feed.body?.getReader();
    if (!reader) throw new Error("no body");
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await fetch(`${running().url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${running().key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "modelx-5.4-mini", messages: [{ role: "user", content: `hi ${i}` }] }),
      });
      expect(r.status).toBe(200);
      await r.arrayBuffer();
      ids.push(r.headers.get("x-request-id") ?? "");
    }
    const records = await readRecords(reader, 3);
    await reader.cancel();
    expect(records.map((r) => r.request_id)).toEqual(ids);
    for (const r of records) {
      expect(r).toMatchObject({ method: "POST", endpoint: "/v1/chat/completions", key_name: "default" });
      expect(r.model).toBe("modelx-5.4-mini");
      expect(r.status).toBe(200);
      expect(r.input_tokens).toBeGreaterThan(0);
      expect(typeof r.latency_ms).toBe("number");
    }
    const keyId = String(records[0]?.key_id);
    await waitFor("3 requests in the usage by model", async () => {
      const usage = (await (await admin(`/usage?by=model&days=1&key=${keyId}`)).json()) as {
        data: { bucket: string; requests: number }[];
      };
      return usage.data.find((u) => u.bucket === "modelx-5.4-mini")?.requests === 3;
    });
    const recent = (await (await admin(`/requests?limit=3&key=${keyId}`)).json()) as {
      data: { request_id: string }[];
    };
    expect(recent.data.map((r) => r.request_id).sort()).toEqual([...ids].sort());
  }, 60_000);
});

async function readRecords(
  reader: { read(): Promise<{ value?: Uint8Array | undefined; done: boolean }> },
  n: number,
) {
  const decoder = new TextDecoder();
  let text = "";
  const records: Record<string, unknown>[] = [];
  const deadline = Date.now() + 10_000;
  while (records.length < n && Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    let end = text.indexOf("\n\n");
    while (end >= 0) {
      const block = text.slice(0, end);
      text = text.slice(end + 2);
      if (block.startsWith("event: request\n")) records.push(JSON.parse(block.split("\ndata: ")[1] ?? "{}"));
      end = text.indexOf("\n\n");
    }
  }
  return records;
}
