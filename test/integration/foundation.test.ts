// The foundation acceptance list, against the compiled executable over HTTP.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type RunningGateway, startGateway } from "../helpers/gateway.ts";
import { keyAccepted, keyAnswers } from "../helpers/wait.ts";

const ALL_MODELS = [
  "modelx-5.5",
  "modelx-5.4",
  "modelx-5.4-mini",
  "modelx-5.3-c",
  "modelx-5.3-c-spark",
  "modelx-5.2",
  "modelx-image-2",
  "modelx-image-1.5",
  "modelx-image-1",
  "modelz-opus-4-7",
  "modelz-opus-4-6",
  "modelz-opus-4-5-20251101",
  "modelz-sonnet-4-6",
  "modelz-sonnet-4-5-20250929",
  "modelz-haiku-4-5-20251001",
  "modelx-embed-3-large",
  "modelx-embed-3-small",
  "modelx-embed-2",
  "modelx-transcribe-1",
  "modelx-transcribe-4o",
  "modelx-transcribe-4o-mini",
  "modelx-tts-1",
  "modelx-tts-1-hd",
  "modelx-tts-4o-mini",
];

interface ModelList {
  object: string;
  data: { id: string; object: string; created: number; owned_by: string }[];
}

let gw: RunningGateway;
let key: string;

async function models(headers: Record<string, string>): Promise<Response> {
  return fetch(`${gw.url}/v1/models`, { headers });
}

async function createKey(args: string[]): Promise<{ secret: string; id: string }> {
  const created = await gw.cli(["keys", "create", "--account", "default", ...args]);
  expect(created.code).toBe(0);
  const secret = created.stdout.trim();
  expect(secret).toMatch(/^sk-[A-Za-z0-9_-]{43,}$/);
  const listed = await gw.cli(["keys", "list", "--json"]);
  const rows = JSON.parse(listed.stdout) as { id: string; prefix: string }[];
  const row = rows.find((r) => secret.startsWith(r.prefix) && created.stderr.includes(r.id));
  if (!row) throw new Error(`created key not listed: ${listed.stdout}`);
  return { secret, id: row.id };
}

beforeAll(async () => {
  gw = await startGateway();
  if (!gw.key) throw new Error(`no bootstrap key printed:\n${gw.logs()}`);
  key = gw.key;
});

afterAll(async () => {
  await gw.dispose();
});

describe("bootstrap and /v1/models", () => {
  test("the bootstrap key lists all 24 catalog models in the OpenAI list shape", async () => {
    const response = await models({ authorization: `Bearer ${key}` });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-request-id")).toMatch(/^req_/);
    const body = (await response.json()) as ModelList;
    expect(body.object).toBe("list");
    expect(body.data.map((m) => m.id)).toEqual(ALL_MODELS);
    for (const m of body.data) {
      expect(m.object).toBe("model");
      expect(Number.isInteger(m.created)).toBe(true);
      expect(typeof m.owned_by).toBe("string");
    }
  });

  test("the bootstrap printed a ready-to-paste curl command", () => {
    expect(gw.logs()).toContain(`curl ${gw.url}/v1/models -H "Authorization: Bearer ${key}"`);
  });

  test("x-api-key works and a version header gives the Anthropic list shape", async () => {
    const openai = await models({ "x-api-key": key });
    expect(openai.status).toBe(200);
    const anthropic = await models({ "x-api-key": key, "anthropic-version": "2023-06-01" });
    const body = (await anthropic.json()) as {
      data: { type: string; id: string; created_at: string }[];
      has_more: boolean;
      first_id: string;
      last_id: string;
    };
    // The Anthropic shape lists what has a Messages form (and the image models): no media models.
    expect(body.data.length).toBe(15);
    expect(body.data[0]?.type).toBe("model");
    expect(body.data[0]?.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect(body.has_more).toBe(false);
    expect(body.first_id).toBe("modelx-5.5");
    const page = await models({ "x-api-key": key, "modelz-version": "2023-06-01" });
    expect(((await page.json()) as { data: unknown[] }).data.length).toBe(15);
  });

  test("a key in a group modelx-* lists only the modelx ids", async () => {
    expect((await gw.cli(["groups", "set", "modelx-only", "--models", "modelx-*"])).code).toBe(0);
    const { secret } = await createKey(["--group", "modelx-only", "--name", "x-only"]);
    await keyAccepted(gw.url, secret);
    const body = (await (await models({ authorization: `Bearer ${secret}` })).json()) as ModelList;
    expect(body.data.map((m) => m.id)).toEqual(ALL_MODELS.filter((id) => id.startsWith("modelx-")));
    const denied = await fetch(`${gw.url}/v1/models/modelz-opus-4-7`, {
      headers: { authorization: `Bearer ${secret}` },
    });
    expect(denied.status).toBe(403);
  });
});

describe("authentication", () => {
  test("a missing or unknown key gets 401 in the OpenAI error shape", async () => {
    const cases: Record<string, string>[] = [
      {},
      { authorization: "Bearer sk-not-a-real-key-0000000000000000000000" },
    ];
    for (const headers of cases) {
      const response = await models(headers);
      expect(response.status).toBe(401);
      const body = (await response.json()) as { error: Record<string, unknown> };
      expect(Object.keys(body.error).sort()).toEqual(["code", "message", "param", "type"]);
    }
  });

  test("revocation through the CLI while the server runs takes effect within 1 s", async () => {
    const { secret, id } = await createKey(["--name", "to-revoke"]);
    await keyAccepted(gw.url, secret);
    expect((await models({ authorization: `Bearer ${secret}` })).status).toBe(200);
    const revoked = await gw.cli(["keys", "revoke", id]);
    expect(revoked.code).toBe(0);
    const returnedAt = Date.now();
    // Time is what is tested here: the revocation must hold within 1 s of the CLI returning.
    await Bun.sleep(1000 - (Date.now() - returnedAt));
    const after = await models({ authorization: `Bearer ${secret}` });
    expect(after.status).toBe(401);
    expect(((await after.json()) as { error: { code: string } }).error.code).toBe("revoked_api_key");
    expect((await gw.cli(["keys", "enable", id])).code).toBe(0);
    await keyAccepted(gw.url, secret);
    expect((await models({ authorization: `Bearer ${secret}` })).status).toBe(200);
  });

  test("an expired key gets 401", async () => {
    const expiresAt = new Date(Date.now() + 1500).toISOString();
    const { secret, id } = await createKey(["--expires-at", expiresAt]);
    await Bun.sleep(1700); // time is what is tested: past the key's expiry (1.5 s from now)
    const response = await models({ authorization: `Bearer ${secret}` });
    expect(response.status).toBe(401);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("expired_api_key");
    const rows = JSON.parse((await gw.cli(["keys", "list", "--json"])).stdout) as {
      id: string;
      status: string;
      expires_at: string;
    }[];
    const row = rows.find((r) => r.id === id);
    expect(row?.status).toBe("expired");
    expect(row?.expires_at).toBe(expiresAt);
  });

  test("allowlist 127.0.0.0/8 passes and 10.0.0.0/8 gets 403; X-Forwarded-For from an untrusted peer is ignored", async () => {
    const local = await createKey(["--allow-ip", "127.0.0.0/8", "--allow-ip", "::1/128"]);
    const remote = await createKey(["--allow-ip", "10.0.0.0/8"]);
    // The later key seen means the earlier one is too (one store revision covers both).
    await keyAnswers(gw.url, remote.secret, 403);
    expect((await models({ authorization: `Bearer ${local.secret}` })).status).toBe(200);
    const denied = await models({ authorization: `Bearer ${remote.secret}` });
    expect(denied.status).toBe(403);
    expect(((await denied.json()) as { error: { code: string } }).error.code).toBe("ip_not_allowed");
    // This gateway trusts no proxy, so a forged header changes nothing.
    const forged = await models({ authorization: `Bearer ${remote.secret}`, "x-forwarded-for": "10.1.2.3" });
    expect(forged.status).toBe(403);
  });
});

describe("trusted proxies", () => {
  test("X-Forwarded-For is honoured from a trusted peer", async () => {
    const proxied = await startGateway({ args: ["--trusted-proxy", "127.0.0.1/32"] });
    try {
      const proxiedKey = proxied.key ?? "";
      const remote = await proxied.cli([
        "keys",
        "create",
        "--account",
        "default",
        "--allow-ip",
        "10.0.0.0/8",
      ]);
      const secret = remote.stdout.trim();
      await keyAnswers(proxied.url, secret, 200, { "x-forwarded-for": "10.1.2.3" });
      const call = (xff?: string) =>
        fetch(`${proxied.url}/v1/models`, {
          headers: { authorization: `Bearer ${secret}`, ...(xff ? { "x-forwarded-for": xff } : {}) },
        });
      expect((await call("10.1.2.3")).status).toBe(200);
      expect((await call("192.0.2.1, 10.1.2.3")).status).toBe(200);
      expect((await call("10.1.2.3, 192.0.2.1")).status).toBe(403);
      expect((await call()).status).toBe(403);
      expect(
        (await fetch(`${proxied.url}/v1/models`, { headers: { authorization: `Bearer ${proxiedKey}` } }))
          .status,
      ).toBe(200);
    } finally {
      await proxied.dispose();
    }
  });
});

describe("paths, errors and probes", () => {
  test("/v1/v1/models and /models get 404 with the base-URL hint", async () => {
    for (const path of ["/v1/v1/models", "/models"]) {
      const response = await fetch(`${gw.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
      expect(response.status).toBe(404);
      const body = (await response.json()) as { error: { message: string; type: string; code: string } };
      expect(body.error.message).toContain("/v1");
      expect(body.error.message).toContain("base URL");
    }
  });

  test("an unknown /v1/messages path answers in the Anthropic error shape", async () => {
    const response = await fetch(`${gw.url}/v1/messages/nope`, { method: "GET" });
    expect(response.status).toBe(404);
    const body = (await response.json()) as { type: string; error: { type: string; message: string } };
    expect(body.type).toBe("error");
    expect(body.error.type).toBe("not_found_error");
  });

  test("a wrong method gets 405 with Allow", async () => {
    const response = await fetch(`${gw.url}/v1/models`, { method: "DELETE" });
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("GET");
  });

  test("probes answer; a client x-request-id is echoed as x-client-request-id beside the gateway's own", async () => {
    const root = await fetch(`${gw.url}/`, { headers: { "x-request-id": "trace-123" } });
    expect(root.status).toBe(200);
    expect(root.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]{32}$/);
    expect(root.headers.get("x-client-request-id")).toBe("trace-123");
    expect(((await root.json()) as { name: string }).name).toBe("modelgate");
    expect((await fetch(`${gw.url}/`, { method: "HEAD" })).status).toBe(200);
    expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${gw.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(((await ready.json()) as { store: string }).store).toBe("ok");
  });

  test("the SQLite file holds no key secret", async () => {
    await gw.cli(["accounts", "list"]);
    const files = ["modelgate.db", "modelgate.db-wal"].map((f) => join(gw.dir, f));
    const bytes = files.map((f) => {
      try {
        return readFileSync(f).toString("latin1");
      } catch {
        return "";
      }
    });
    const secretBody = key.slice(3);
    for (const content of bytes) {
      expect(content.includes(secretBody)).toBe(false);
      expect(content.includes(secretBody.slice(0, 20))).toBe(false);
    }
    expect(bytes.join("").length).toBeGreaterThan(0);
  });
});
