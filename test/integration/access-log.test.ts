// The access log through the compiled binary: one line per request with its id, key name, model,
// status, error code, channel, latency and tokens (a stream's line after it settled, with its
// tokens); upstream failures with their cause; text or JSON by flag, variable or config key; and
// refused requests on the admin event feed beside the billed ones.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  adminTokenIn,
  binary,
  createKey,
  type RunningGateway,
  startGateway,
  tempDir,
} from "../helpers/gateway.ts";
import { keyAccepted } from "../helpers/wait.ts";

type Line = Record<string, unknown>;

/** The access lines (msg "request") among the JSON log lines written so far. */
function accessLines(gw: RunningGateway): Line[] {
  return gw
    .logs()
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Line)
    .filter((l) => l.msg === "request");
}

/** Waits (bounded) for the access line of the request the client sent with `x-request-id: requestId`. */
async function lineOf(gw: RunningGateway, requestId: string): Promise<Line> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const found = accessLines(gw).filter((l) => l.client_request_id === requestId);
    if (found.length > 0) {
      // An absence is what is tested: no second line for the request within 50 ms.
      await Bun.sleep(50);
      expect(accessLines(gw).filter((l) => l.client_request_id === requestId)).toHaveLength(1);
      // The gateway's own id keys the line; the client's is kept beside it.
      expect(String((found[0] as Line).request_id)).toMatch(/^req_[0-9a-f]{32}$/);
      return found[0] as Line;
    }
    if (Date.now() > deadline) throw new Error(`no access line for ${requestId}:\n${gw.logs()}`);
    await Bun.sleep(20);
  }
}

function chat(gw: RunningGateway, id: string, auth: Record<string, string>, body: Record<string, unknown>) {
  return fetch(`${gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json", "x-request-id": id },
    body: JSON.stringify({ model: "modelx-5.4-mini", max_tokens: 20, ...body }),
  });
}

describe("JSON access log (stderr is not a terminal)", () => {
  let gw: RunningGateway;
  let secret = "";
  let limited = "";
  let admin = "";

  beforeAll(async () => {
    gw = await startGateway({
      config: `[[channels]]\nkind = "sim"\nname = "local-sim"\nmodels = ["modelx-5.4-mini"]\n[[channels]]\nkind = "openai-chat"\nname = "dead-upstream"\nbase_url = "http://127.0.0.1:9/v1"\nmodels = ["modelx-5.2"]\n`,
    });
    secret = gw.key ?? "";
    limited = (await createKey(gw, ["--account", "default", "--name", "ci-bot", "--rpm", "1"])).secret;
    admin = adminTokenIn(gw.logs()) ?? "";
    await keyAccepted(gw.url, limited);
  });
  afterAll(() => gw.dispose());

  test("a billed request: key, model, channel, status, latency and tokens", async () => {
    const response = await chat(
      gw,
      "acc-ok-1",
      { authorization: `Bearer ${secret}` },
      {
        messages: [{ role: "user", content: "hello" }],
      },
    );
    expect(response.status).toBe(200);
    const usage = ((await response.json()) as { usage: { prompt_tokens: number; completion_tokens: number } })
      .usage;
    const line = await lineOf(gw, "acc-ok-1");
    expect(line).toMatchObject({
      level: "info",
      method: "POST",
      path: "/v1/chat/completions",
      status: 200,
      key: "default",
      model: "modelx-5.4-mini",
      channel: "local-sim",
      input_tokens: usage.prompt_tokens,
      output_tokens: usage.completion_tokens,
    });
    expect(line.code).toBeUndefined();
    expect(typeof line.latency_ms).toBe("number");
  });

  test("a stream's line is written once it settled, with the tokens it used", async () => {
    const response = await chat(
      gw,
      "acc-stream-1",
      { authorization: `Bearer ${secret}` },
      {
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: "user", content: "count to three" }],
      },
    );
    const text = await response.text();
    const usage = /"completion_tokens":(\d+)/.exec(text)?.[1];
    const line = await lineOf(gw, "acc-stream-1");
    expect(line).toMatchObject({ status: 200, key: "default", channel: "local-sim" });
    expect(line.output_tokens).toBe(Number(usage));
  });

  test("refusals: no key, a key without Bearer, an admin token, a rate limit, an unknown path", async () => {
    expect((await chat(gw, "acc-401-a", {}, {})).status).toBe(401);
    expect((await chat(gw, "acc-401-b", { authorization: secret }, {})).status).toBe(401);
    expect((await chat(gw, "acc-401-c", { authorization: `Bearer ${admin}` }, {})).status).toBe(401);
    const body = { messages: [{ role: "user", content: "hi" }] };
    expect((await chat(gw, "acc-rpm-1", { authorization: `Bearer ${limited}` }, body)).status).toBe(200);
    expect((await chat(gw, "acc-rpm-2", { authorization: `Bearer ${limited}` }, body)).status).toBe(429);
    const missing = await fetch(`${gw.url}/v2/nothing`, { headers: { "x-request-id": "acc-404" } });
    expect(missing.status).toBe(404);

    expect(await lineOf(gw, "acc-401-a")).toMatchObject({ status: 401, code: "missing_api_key" });
    expect(await lineOf(gw, "acc-401-b")).toMatchObject({ status: 401, code: "malformed_authorization" });
    expect(await lineOf(gw, "acc-401-c")).toMatchObject({ status: 401, code: "admin_token_not_api_key" });
    expect(await lineOf(gw, "acc-rpm-2")).toMatchObject({
      status: 429,
      code: "rate_limit_exceeded",
      key: "ci-bot",
      model: "modelx-5.4-mini",
    });
    expect(await lineOf(gw, "acc-404")).toMatchObject({ status: 404, method: "GET", path: "/v2/nothing" });
    const written = JSON.stringify(accessLines(gw));
    for (const shown of [secret, admin, limited]) expect(written).not.toContain(shown.slice(4));
  });

  test("an upstream failure is logged with its cause and the channel tried", async () => {
    const response = await chat(
      gw,
      "acc-502",
      { authorization: `Bearer ${secret}` },
      {
        model: "modelx-5.2",
        messages: [{ role: "user", content: "hi" }],
      },
    );
    expect(response.status).toBeGreaterThanOrEqual(502);
    const line = await lineOf(gw, "acc-502");
    expect(line).toMatchObject({ level: "warn", status: response.status, code: "upstream_unreachable" });
    // Every attempt's channel, in order (the retry policy may call it more than once).
    expect(String(line.channel)).toMatch(/^dead-upstream(,dead-upstream)*$/);
    expect(String(line.error)).toContain('Channel "dead-upstream" could not be reached (ECONNREFUSED');
  });

  test("refused requests reach the admin event feed with their error code", async () => {
    const events = await fetch(`${gw.url}/admin/v1/events`, {
      headers: { authorization: `Bearer ${admin}` },
    });
    const reader = (events.body as ReadableStream<Uint8Array>).getReader();
    await reader.read(); // ready
    expect((await chat(gw, "acc-feed-401", { authorization: "sk-nobearer-0000000000000" }, {})).status).toBe(
      401,
    );
    let text = "";
    const decoder = new TextDecoder();
    while (!text.includes("acc-feed-401")) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    await reader.cancel();
    const data = /data: (\{.*"acc-feed-401".*\})/.exec(text)?.[1] ?? "{}";
    expect(JSON.parse(data)).toMatchObject({
      client_request_id: "acc-feed-401",
      endpoint: "/v1/chat/completions",
      status: 401,
      error_code: "malformed_authorization",
      cost_nanos: 0,
      key_name: "",
    });
  });
});

/** Starts serve with `extra`, waits for the text start line, sends one refused request, stops. */
async function textRun(extra: string[], env: Record<string, string>, config?: string): Promise<string> {
  const dir = tempDir();
  const args = [
    binary(),
    "serve",
    "--listen",
    "127.0.0.1:0",
    "--db",
    `sqlite://${join(dir, "t.db")}`,
    ...extra,
  ];
  if (config !== undefined) {
    writeFileSync(join(dir, "c.toml"), config);
    args.push("--config", join(dir, "c.toml"));
  }
  const proc = Bun.spawn(args, {
    cwd: dir,
    stdout: "ignore",
    stderr: "pipe",
    env: { PATH: process.env.PATH ?? "", ...env },
  });
  const reader = proc.stderr.getReader();
  const decoder = new TextDecoder();
  let text = "";
  try {
    let url: string | undefined;
    const deadline = Date.now() + 15_000;
    while (url === undefined) {
      if (Date.now() > deadline) throw new Error(`no text start line:\n${text}`);
      const { value, done } = await reader.read();
      if (done) throw new Error(`serve exited:\n${text}`);
      text += decoder.decode(value, { stream: true });
      url = / INFO {2}modelgate listening url=(http:\/\/127\.0\.0\.1:\d+) /.exec(text)?.[1];
    }
    const refused = await fetch(`${url}/v1/models`, { headers: { "x-request-id": "text-401" } });
    expect(refused.status).toBe(401);
    while (!text.includes("client_request_id=text-401")) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    return text;
  } finally {
    proc.kill("SIGTERM");
    await proc.exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

test("server.access_log = false writes no line per request", async () => {
  const gw = await startGateway({ config: "[server]\naccess_log = false\n" });
  try {
    expect((await chat(gw, "quiet-401", {}, {})).status).toBe(401);
    const models = await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${gw.key}` } });
    expect(models.status).toBe(200);
    // An absence is what is tested: still no line 200 ms after the answers.
    await Bun.sleep(200);
    expect(accessLines(gw)).toEqual([]);
    expect(gw.logs()).toContain('"msg":"modelgate listening"');
  } finally {
    await gw.dispose();
  }
});

describe("text access log", () => {
  const cases: [string, string[], Record<string, string>, string | undefined][] = [
    ["--log-format text", ["--log-format", "text"], {}, undefined],
    ["MODELGATE_LOG_FORMAT=text", [], { MODELGATE_LOG_FORMAT: "text" }, undefined],
    ['server.log_format = "text"', [], {}, '[server]\nlog_format = "text"\n'],
  ];
  for (const [how, extra, env, config] of cases) {
    test(how, async () => {
      const text = await textRun(extra, env, config);
      expect(text).toMatch(
        /^\S+Z INFO {2}request request_id=req_[0-9a-f]{32} client_request_id=text-401 method=GET path=\/v1\/models status=401 code=missing_api_key latency_ms=\d+$/m,
      );
      expect(text).not.toContain('{"t":');
    });
  }

  test("an unknown format is refused with the setting's path", async () => {
    const run = Bun.spawnSync([binary(), "serve", "--log-format", "xml", "--listen", "127.0.0.1:0"], {
      stderr: "pipe",
      env: { PATH: process.env.PATH ?? "" },
    });
    expect(run.exitCode).toBe(1);
    expect(run.stderr.toString()).toContain("log_format");
    expect(run.stderr.toString()).toContain("expected auto, text or json");
  });
});
