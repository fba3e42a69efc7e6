// Trust boundaries and records (issue 25, items 10–14) against the compiled binary: revoked
// credentials lose their open feeds and sockets, the gateway's own request id keys every record,
// WebSocket refusals are logged like HTTP ones, X-Forwarded-For is read strictly, and operator
// output cannot carry formulas or control characters.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { adminTokenIn, createKey, type RunningGateway, startGateway } from "../helpers/gateway.ts";
import { hostPort, type RawResponse, rawUpgrade } from "../helpers/raw-http.ts";
import { waitFor } from "../helpers/wait.ts";

let gw: RunningGateway;

beforeAll(async () => {
  gw = await startGateway({ config: '[server]\ntrusted_proxies = ["127.0.0.1/32"]\n' });
}, 30_000);
afterAll(async () => {
  await gw.dispose();
}, 30_000);

/** A key of a new account holding $10, with `args` added to `keys create`. */
async function keyOf(account: string, args: string[] = []): Promise<{ secret: string; id: string }> {
  const made = await gw.cli(["accounts", "create", account, "--balance", "10"]);
  if (made.code !== 0) throw new Error(made.stderr);
  const key = await createKey(gw, ["--account", account, ...args]);
  // The gateway's key cache picks the key up within its poll interval.
  await waitFor(
    "the key to be known",
    async () => {
      const r = await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key.secret}` } });
      await r.arrayBuffer();
      return r.status === 401 ? undefined : true;
    },
    15_000,
  );
  return key;
}

const chat = JSON.stringify({ model: "modelx-5.5", messages: [{ role: "user", content: "hi" }] });

function post(path: string, secret: string, headers: Record<string, string> = {}, body = chat) {
  return fetch(`${gw.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/json", ...headers },
    body,
  });
}

describe("X-Forwarded-For from a trusted proxy (item 13)", () => {
  test("an unparsable hop is a 400 naming the header, never the proxy's allowlisted address", async () => {
    const { secret } = await keyOf("xff", ["--allow-ip", "127.0.0.1"]);
    const alone = await post("/v1/chat/completions", secret, { "x-forwarded-for": "9.9.9.9" });
    expect(alone.status).toBe(403);
    const garbage = await post("/v1/chat/completions", secret, { "x-forwarded-for": "9.9.9.9, garbage" });
    expect(garbage.status).toBe(400);
    const body = (await garbage.json()) as { error: { message: string; param: string; code: string } };
    expect(body.error.param).toBe("X-Forwarded-For");
    expect(body.error.code).toBe("invalid_forwarded_for");
    expect(body.error.message).toContain('"garbage"');
  }, 30_000);

  test("octal and hex IPv4 forms are not addresses", async () => {
    const { secret } = await keyOf("xff-octal", ["--allow-ip", "10.1.2.3"]);
    expect((await post("/v1/chat/completions", secret, { "x-forwarded-for": "10.1.2.3" })).status).toBe(200);
    for (const form of ["012.1.2.3", "0xa.1.2.3", "10.1.515"]) {
      const r = await post("/v1/chat/completions", secret, { "x-forwarded-for": form });
      expect({ form, status: r.status }).toEqual({ form, status: 400 });
    }
  }, 30_000);
});

/** The admin token `serve` printed at its first start. */
function adminToken(): string {
  const found = adminTokenIn(gw.logs());
  if (!found) throw new Error(`no admin token printed at bootstrap:\n${gw.logs()}`);
  return found;
}

function admin(path: string, json?: unknown, token = adminToken()) {
  return fetch(`${gw.url}/admin/v1${path}`, {
    method: json === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    ...(json === undefined ? {} : { body: JSON.stringify(json) }),
  });
}

describe("operators' tools (item 14)", () => {
  test("usage --format csv escapes a formula after any separator", async () => {
    const { secret } = await keyOf("x;=1+1");
    expect((await post("/v1/chat/completions", secret)).status).toBe(200);
    const csv = await waitFor("the request in the usage export", async () => {
      const out = await gw.cli(["usage", "--group-by", "account", "--format", "csv"]);
      return out.stdout.includes("x;") ? out.stdout : undefined;
    });
    const line = csv.split("\r\n").find((l) => l.includes("x;")) ?? "";
    expect(line.startsWith(`"x;'=1+1",1,`)).toBe(true);
  }, 30_000);

  test("names with control characters are refused at the CLI, naming the field", async () => {
    const cases: [string[], string][] = [
      [["accounts", "create", "evil\u001b]0;pwned\u0007"], "account name"],
      [["groups", "set", "g\u0007", "--models", "*"], "group name"],
      [["keys", "create", "--account", "default", "--name", "k\u001b[2J"], "--name"],
      [["admin", "token", "create", "--name", "t\r"], "--name"],
    ];
    for (const [args, field] of cases) {
      const out = await gw.cli(args);
      expect({ args, code: out.code }).toEqual({ args, code: 2 });
      expect(out.stderr).toContain(`${field}: must not contain control characters`);
    }
    const accounts = await gw.cli(["accounts", "list", "--json"]);
    expect(accounts.stdout).not.toContain("evil");
  }, 30_000);

  test("names with control characters are refused by the admin API, naming the field", async () => {
    const cases: [string, unknown, string][] = [
      ["/accounts", { name: "evil\u001b[31m" }, "name"],
      ["/keys", { account: "default", name: "k\u0007" }, "name"],
      ["/keys", { account: "default\u0085" }, "account"],
    ];
    for (const [path, json, param] of cases) {
      const r = await admin(path, json);
      const body = (await r.json()) as { error: { param: string; message: string } };
      expect({ path, status: r.status, param: body.error.param }).toEqual({ path, status: 400, param });
      expect(body.error.message).toContain("must not contain control characters");
    }
    const keys = (await (await admin("/keys")).json()) as { data: { name: string }[] };
    expect(keys.data.some((k) => k.name.startsWith("k"))).toBe(false);
  }, 30_000);
});

/** The JSON access-log lines the gateway wrote so far. */
function accessLines(): Record<string, unknown>[] {
  return gw
    .logs()
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.msg === "request");
}

/** Reads the admin event feed into `events` until `stop` is called. */
async function readFeed(events: Record<string, unknown>[]): Promise<() => Promise<void>> {
  const response = await admin("/events");
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = "";
  const pump = (async () => {
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
      if (done) return;
      text += decoder.decode(value, { stream: true });
      for (let end = text.indexOf("\n\n"); end >= 0; end = text.indexOf("\n\n")) {
        const block = text.slice(0, end);
        text = text.slice(end + 2);
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (block.startsWith("event: request") && data)
          events.push(JSON.parse(data) as Record<string, unknown>);
      }
    }
  })();
  return async () => {
    await reader.cancel().catch(() => undefined);
    await pump;
  };
}

describe("request ids (item 11)", () => {
  test("10 concurrent requests with one client id: 10 gateway ids keying 10 lines, events and records", async () => {
    const { secret } = await keyOf("dup-ids");
    const events: Record<string, unknown>[] = [];
    const stop = await readFeed(events);
    try {
      await tenWithOneId(secret, events);
    } finally {
      await stop();
    }
  }, 30_000);
});

async function tenWithOneId(secret: string, events: Record<string, unknown>[]): Promise<void> {
  const answers = await Promise.all(
    Array.from({ length: 10 }, () => post("/v1/chat/completions", secret, { "x-request-id": "dup-1" })),
  );
  const ids = answers.map((r) => r.headers.get("x-request-id") ?? "");
  expect(answers.map((r) => r.status)).toEqual(Array(10).fill(200));
  expect(answers.map((r) => r.headers.get("x-client-request-id"))).toEqual(Array(10).fill("dup-1"));
  for (const id of ids) expect(id).toMatch(/^req_[0-9a-f]{32}$/);
  expect(new Set(ids).size).toBe(10);

  const lines = await waitFor(
    "10 access-log lines",
    () => {
      const found = accessLines().filter((l) => l.client_request_id === "dup-1");
      return found.length >= 10 ? found : undefined;
    },
    15_000,
  );
  expect(lines.map((l) => l.request_id).sort()).toEqual([...ids].sort());
  for (const line of lines)
    expect(line).toMatchObject({ status: 200, path: "/v1/chat/completions", model: "modelx-5.5" });

  const seen = await waitFor("10 feed events", () => (events.length >= 10 ? events : undefined));
  const mine = seen.filter((e) => e.client_request_id === "dup-1");
  expect(mine.map((e) => e.request_id).sort()).toEqual([...ids].sort());
  for (const event of mine) expect(event.cost_nanos).toBeGreaterThan(0);
  expect(seen.filter((e) => e.cost_nanos === 0)).toEqual([]);

  const db = new Database(gw.dbUrl.replace("sqlite://", ""), { readonly: true });
  try {
    const rows = await waitFor("10 usage records", () => {
      const found = db
        .query("SELECT request_id, client_request_id FROM usage_records WHERE client_request_id = 'dup-1'")
        .all() as { request_id: string; client_request_id: string }[];
      return found.length >= 10 ? found : undefined;
    });
    expect(rows.map((r) => r.request_id).sort()).toEqual([...ids].sort());
  } finally {
    db.close();
  }
}

/** A WebSocket upgrade of /v1/responses with `headers` verbatim: its answer's head (and body, when one ends). */
const upgradeHead = (headers: string[]) => rawUpgrade(gw.url, "/v1/responses", headers);

const UPGRADE = ["Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Version: 13"];
const WS_KEY = "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==";

describe("the Responses WebSocket's refusals and upgrades (item 12)", () => {
  test("a refused upgrade (bad key, no Sec-WebSocket-Key) has an access-log line with id and path, and a feed event", async () => {
    const events: Record<string, unknown>[] = [];
    const stop = await readFeed(events);
    try {
      const { port } = hostPort(gw.url);
      const badKey = await upgradeHead([
        `Host: 127.0.0.1:${port}`,
        ...UPGRADE,
        WS_KEY,
        "Authorization: Bearer sk-wrong-0000000000000",
      ]);
      const noKey = await upgradeHead([
        `Host: 127.0.0.1:${port}`,
        ...UPGRADE,
        `Authorization: Bearer ${gw.key}`,
      ]);
      expect([badKey.status, noKey.status]).toEqual([401, 400]);
      const cases: [RawResponse, number, string][] = [
        [badKey, 401, "invalid_api_key"],
        [noKey, 400, "invalid_request"],
      ];
      for (const [answer, status, code] of cases) {
        const id = answer.headers["x-request-id"] ?? "";
        expect(id).toMatch(/^req_[0-9a-f]{32}$/);
        const line = await waitFor(`the access-log line of ${id}`, () =>
          accessLines().find((l) => l.request_id === id),
        );
        expect(line).toMatchObject({ method: "GET", path: "/v1/responses", status, code });
        const event = await waitFor(`the feed event of ${id}`, () => events.find((e) => e.request_id === id));
        expect(event).toMatchObject({ endpoint: "/v1/responses", status, error_code: code, cost_nanos: 0 });
      }
    } finally {
      await stop();
    }
  }, 30_000);

  test("a short Host does not break the upgrade", async () => {
    for (const host of ["x", "ab", "gw", "a:1"]) {
      const answer = await upgradeHead([
        `Host: ${host}`,
        ...UPGRADE,
        WS_KEY,
        `Authorization: Bearer ${gw.key}`,
      ]);
      expect({ host, status: answer.status }).toEqual({ host, status: 101 });
    }
  }, 30_000);

  test("a 100k-deep response.create frame is a 400 error frame, as on HTTP", async () => {
    const ws = new WebSocket(`${gw.url.replace("http://", "ws://")}/v1/responses`, {
      headers: { authorization: `Bearer ${gw.key}` },
    } as unknown as string[]);
    try {
      const frames: Record<string, unknown>[] = [];
      ws.onmessage = (m) => frames.push(JSON.parse(String(m.data)) as Record<string, unknown>);
      await new Promise<void>((resolve, reject) => {
        ws.onopen = () => resolve();
        ws.onerror = () => reject(new Error("the WebSocket did not open"));
      });
      const depth = 100_000;
      ws.send(
        `{"type":"response.create","model":"modelx-5.5","input":${"[".repeat(depth)}${"]".repeat(depth)}}`,
      );
      const error = await waitFor("an error frame", () => frames.find((f) => f.type === "error"));
      expect(error.status).toBe(400);
      expect(JSON.stringify(error)).toContain("more than 128 levels deep");
    } finally {
      ws.close();
    }
  }, 30_000);
});

/** Reads a feed until it ends; resolves with everything it sent. */
async function feedUntilEnd(response: Response): Promise<string> {
  return await response.text();
}

/** A new admin token minted by the CLI: its id and secret. */
async function mintAdminToken(name: string): Promise<{ id: string; token: string }> {
  const made = await gw.cli(["admin", "token", "create", "--name", name]);
  if (made.code !== 0) throw new Error(made.stderr);
  const id = /adm_[0-9a-f]+/.exec(made.stderr)?.[0];
  if (!id) throw new Error(`no token id in: ${made.stderr}`);
  return { id, token: made.stdout.trim() };
}

describe("revocation ends what is open (item 10)", () => {
  test("revoking an admin token through the admin API or the CLI ends its open event feeds", async () => {
    const viaApi = await mintAdminToken("feed-api");
    const viaCli = await mintAdminToken("feed-cli");
    const other = await mintAdminToken("feed-other");
    const feeds = await Promise.all([viaApi, viaCli, other].map((t) => admin("/events", undefined, t.token)));
    expect(feeds.map((f) => f.status)).toEqual([200, 200, 200]);
    const [apiFeed, cliFeed, otherFeed] = feeds as [Response, Response, Response];
    const revoked = await admin(`/tokens/${viaApi.id}/revoke`, {});
    expect(revoked.status).toBe(200);
    expect(await feedUntilEnd(apiFeed)).toContain("event: revoked");
    const cli = await gw.cli(["admin", "token", "revoke", viaCli.id]);
    expect(cli.code).toBe(0);
    expect(await feedUntilEnd(cliFeed)).toContain("event: revoked");
    // The feed of a token still valid stays open: it still delivers the next request.
    expect((await post("/v1/chat/completions", gw.key ?? "")).status).toBe(200);
    const reader = otherFeed.body?.getReader();
    let text = "";
    while (!text.includes("event: request")) {
      const chunk = await reader?.read();
      if (chunk === undefined || chunk.done) break;
      text += new TextDecoder().decode(chunk.value);
    }
    expect(text).toContain("event: request");
    expect(text).not.toContain("event: revoked");
    await reader?.cancel();
  }, 30_000);

  /** Opens a Responses WebSocket with `secret`; resolves with its frames and how it closed. */
  async function socket(secret: string) {
    const ws = new WebSocket(`${gw.url.replace("http://", "ws://")}/v1/responses`, {
      headers: { authorization: `Bearer ${secret}` },
    } as unknown as string[]);
    const frames: Record<string, unknown>[] = [];
    ws.onmessage = (m) => frames.push(JSON.parse(String(m.data)) as Record<string, unknown>);
    const closed = new Promise<{ code: number; reason: string }>((resolve) => {
      ws.onclose = (e) => resolve({ code: e.code, reason: e.reason });
    });
    await new Promise<void>((resolve, reject) => {
      ws.onopen = () => resolve();
      ws.onerror = () => reject(new Error("the WebSocket did not open"));
    });
    return { ws, frames, closed };
  }

  test("a revoked key's open Responses WebSocket is closed with the reason", async () => {
    const { secret, id } = await keyOf("ws-revoked");
    const open = await socket(secret);
    try {
      expect((await gw.cli(["keys", "revoke", id])).code).toBe(0);
      expect(await open.closed).toEqual({ code: 1008, reason: "API key revoked" });
      const error = open.frames.find((f) => f.type === "error") as { error: { code: string } } | undefined;
      expect(error?.error.code).toBe("revoked_api_key");
    } finally {
      open.ws.close();
    }
  }, 30_000);

  test("an expired key's open Responses WebSocket is closed with the reason", async () => {
    const { secret } = await keyOf("ws-expired", ["--expires-at", new Date(Date.now() + 4000).toISOString()]);
    const open = await socket(secret);
    try {
      expect(await open.closed).toEqual({ code: 1008, reason: "API key expired" });
    } finally {
      open.ws.close();
    }
  }, 30_000);
});
