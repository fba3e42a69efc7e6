// Trust boundaries and records (issue 25, items 10–14) against the compiled binary: revoked
// credentials lose their open feeds and sockets, the gateway's own request id keys every record,
// WebSocket refusals are logged like HTTP ones, X-Forwarded-For is read strictly, and operator
// output cannot carry formulas or control characters.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createKey, type RunningGateway, startGateway } from "../helpers/gateway.ts";

let gw: RunningGateway;

beforeAll(async () => {
  gw = await startGateway({ config: '[server]\ntrusted_proxies = ["127.0.0.1/32"]\n' });
}, 30_000);
afterAll(async () => {
  await gw.dispose();
}, 30_000);

/** Polls `probe` until it returns a value (not undefined), or fails after `ms`. */
async function waitFor<T>(
  what: string,
  probe: () => T | undefined | Promise<T | undefined>,
  ms = 15_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(20);
  }
}

/** A key of a new account holding $10, with `args` added to `keys create`. */
async function keyOf(account: string, args: string[] = []): Promise<{ secret: string; id: string }> {
  const made = await gw.cli(["accounts", "create", account, "--balance", "10"]);
  if (made.code !== 0) throw new Error(made.stderr);
  const key = await createKey(gw, ["--account", account, ...args]);
  // The gateway's key cache picks the key up within its poll interval.
  await waitFor("the key to be known", async () => {
    const r = await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key.secret}` } });
    await r.arrayBuffer();
    return r.status === 401 ? undefined : true;
  });
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
  });

  test("octal and hex IPv4 forms are not addresses", async () => {
    const { secret } = await keyOf("xff-octal", ["--allow-ip", "10.1.2.3"]);
    expect((await post("/v1/chat/completions", secret, { "x-forwarded-for": "10.1.2.3" })).status).toBe(200);
    for (const form of ["012.1.2.3", "0xa.1.2.3", "10.1.515"]) {
      const r = await post("/v1/chat/completions", secret, { "x-forwarded-for": form });
      expect({ form, status: r.status }).toEqual({ form, status: 400 });
    }
  });
});

/** The admin token `serve` printed at its first start. */
function adminToken(): string {
  const found = /^ {4}(mga-[A-Za-z0-9_-]+)$/m.exec(gw.logs())?.[1];
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
  });

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
  });

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
  });
});
