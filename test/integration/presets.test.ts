// Upstream presets end to end: one gateway (the compiled binary) with a channel per preset, each
// configured by `preset = "..."` and pointed at a recording upstream that speaks that server's
// dialect (test/integration/preset-servers.ts). For every preset, a non-streamed and a streamed
// request: the server receives the right path, credential header, model name and Chat dialect;
// the client gets the text; the usage record holds the server's exact tokens, marked reported.

import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PRESETS } from "../../src/config/presets.ts";
import { type RunningGateway, runCli, startGateway, tempDir } from "../helpers/gateway.ts";
import {
  type RecordedRequest,
  type RecordingUpstream,
  startRecordingUpstream,
} from "../helpers/recording-upstream.ts";
import { type ClientProtocol, GATEWAY_ENV, type PresetServer, SERVERS } from "./preset-servers.ts";

let gw: RunningGateway | undefined;
const upstreams = new Map<string, RecordingUpstream>();
/** Request id → what the record must say. */
const expected = new Map<string, { server: PresetServer; stream: boolean }>();

function running(): RunningGateway {
  if (!gw) throw new Error("gateway did not start");
  return gw;
}

function upstreamOf(server: PresetServer): RecordingUpstream {
  const upstream = upstreams.get(server.preset);
  if (!upstream) throw new Error(`no upstream for ${server.preset}`);
  return upstream;
}

/** The channel entry: the preset's own base URL path, on the recording upstream's origin. */
function channelToml(server: PresetServer, origin: string): string {
  const path = new URL(PRESETS[server.preset].base_url).pathname.replace(/\/+$/, "");
  return `
[[channels]]
preset = "${server.preset}"
name = "${server.preset}"
base_url = "${origin}${path}"
models = ["${server.model}"]
model_map = { "${server.model}" = "${server.upstreamModel}" }
${server.extra}
`;
}

beforeAll(async () => {
  for (const server of SERVERS) {
    upstreams.set(
      server.preset,
      startRecordingUpstream((request) => {
        const body = request.json as {
          stream?: boolean;
          stream_options?: { continuous_usage_stats?: boolean };
        };
        if (body.stream !== true) return Response.json(server.answer());
        const continuous = body.stream_options?.continuous_usage_stats === true;
        return { chunks: [server.stream(continuous)], headers: { "content-type": "text/event-stream" } };
      }),
    );
  }
  const config = SERVERS.map((s) => channelToml(s, upstreamOf(s).url)).join("");
  gw = await startGateway({ config, env: GATEWAY_ENV });
}, 60_000);

afterAll(async () => {
  await gw?.dispose();
  for (const upstream of upstreams.values()) await upstream.stop();
}, 60_000);

function requestBody(protocol: ClientProtocol, model: string, stream: boolean): Record<string, unknown> {
  switch (protocol) {
    case "responses":
      return { model, instructions: "Answer briefly.", input: "Say hello.", max_output_tokens: 50, stream };
    case "messages":
      return {
        model,
        system: "Answer briefly.",
        messages: [{ role: "user", content: "Say hello." }],
        max_tokens: 50,
        stream,
      };
    case "chat":
      return {
        model,
        messages: [
          { role: "developer", content: "Answer briefly." },
          { role: "user", content: "Say hello." },
        ],
        max_completion_tokens: 50,
        tools: [
          {
            type: "function",
            function: {
              name: "lookup",
              parameters: { type: "object", properties: { q: { type: "string" } } },
            },
          },
        ],
        parallel_tool_calls: false,
        reasoning_effort: "low",
        stream,
      };
  }
}

const PATHS: Record<ClientProtocol, string> = {
  responses: "/v1/responses",
  messages: "/v1/messages",
  chat: "/v1/chat/completions",
};

interface CallOptions {
  /** The client's protocol, when it is not the one the server speaks (the gateway translates). */
  client?: ClientProtocol;
  /** Fields added to the request body. */
  extra?: Record<string, unknown>;
}

async function call(server: PresetServer, stream: boolean, options: CallOptions = {}) {
  const client = options.client ?? server.client;
  const response = await fetch(`${running().url}${PATHS[client]}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${running().key}`,
      ...(client === "messages" ? { "anthropic-version": "2023-06-01" } : {}),
    },
    body: JSON.stringify({ ...requestBody(client, server.model, stream), ...options.extra }),
  });
  const text = await response.text();
  expect({ status: response.status, text: response.status === 200 ? "" : text }).toEqual({
    status: 200,
    text: "",
  });
  const id = response.headers.get("x-request-id");
  if (id === null) throw new Error("no x-request-id on the answer");
  expected.set(id, { server, stream });
  return text;
}

/** The text a client reads from a non-streamed answer in its protocol. */
function answerText(protocol: ClientProtocol, body: string): string {
  const json = JSON.parse(body);
  if (protocol === "chat") return json.choices[0].message.content;
  if (protocol === "messages") return json.content[0].text;
  return json.output[0].content[0].text;
}

/** The text a client reads from a stream: the protocol's text deltas, in order. */
function streamText(protocol: ClientProtocol, body: string): string {
  let text = "";
  for (const block of body.split("\n\n")) {
    const line = block.split("\n").find((l) => l.startsWith("data: "));
    if (line === undefined || line === "data: [DONE]") continue;
    const json = JSON.parse(line.slice(6));
    if (protocol === "chat") text += json.choices?.[0]?.delta?.content ?? "";
    else if (protocol === "messages" && json.type === "content_block_delta") text += json.delta.text;
    else if (protocol === "responses" && json.type === "response.output_text.delta") text += json.delta;
  }
  return text;
}

/** Path, credential headers and model name every call to the server must carry. */
function expectCall(server: PresetServer, request: RecordedRequest): Record<string, unknown> {
  expect(request.path).toBe(server.path);
  for (const [name, value] of Object.entries(server.headers)) expect(request.headers[name]).toBe(value);
  const json = request.json as Record<string, unknown>;
  expect(json.model).toBe(server.upstreamModel);
  return json;
}

/** The Chat dialect: the cap under the field the server reads, developer as system, the rest per server. */
function expectDialect(server: PresetServer, json: Record<string, unknown>): void {
  const dialect = server.dialect;
  if (dialect === undefined) return;
  const other = dialect.cap === "max_tokens" ? "max_completion_tokens" : "max_tokens";
  expect(json[dialect.cap]).toBe(50);
  expect(other in json).toBe(false);
  expect((json.messages as { role: string }[]).map((m) => m.role)).toEqual(["system", "user"]);
  if (dialect.parallel) expect(json.parallel_tool_calls).toBe(false);
  else expect("parallel_tool_calls" in json).toBe(false);
  if (dialect.effort === "reasoning_effort") expect(json.reasoning_effort).toBe("low");
  else expect("reasoning_effort" in json).toBe(false);
  if (dialect.effort === "reasoning.effort") expect(json.reasoning).toEqual({ effort: "low" });
}

describe.each(SERVERS.map((s) => [s.preset, s] as const))("preset %s", (_name, server) => {
  test("non-streamed: request shape and dialect; the client gets the text", async () => {
    upstreamOf(server).clear();
    const body = await call(server, false);
    expect(answerText(server.client, body)).toBe(server.text);
    const json = expectCall(server, upstreamOf(server).last());
    expectDialect(server, json);
    expect(json.stream === undefined || json.stream === false).toBe(true);
  }, 60_000);

  test("streamed: request shape and dialect, usage asked for; the client gets the text", async () => {
    upstreamOf(server).clear();
    const body = await call(server, true);
    expect(streamText(server.client, body)).toBe(server.text);
    const json = expectCall(server, upstreamOf(server).last());
    expectDialect(server, json);
    expect(json.stream).toBe(true);
    if (server.client === "chat") expect(json.stream_options).toEqual({ include_usage: true });
  }, 60_000);
});

describe("vLLM continuous usage stats", () => {
  test("a client's continuous_usage_stats reaches vLLM; usage on every chunk is billed once, from the last", async () => {
    const vllm = SERVERS.find((s) => s.preset === "vllm");
    if (vllm === undefined) throw new Error("no vllm server");
    upstreamOf(vllm).clear();
    const body = await call(vllm, true, { extra: { stream_options: { continuous_usage_stats: true } } });
    expect(streamText("chat", body)).toBe(vllm.text);
    const json = expectCall(vllm, upstreamOf(vllm).last());
    expect(json.stream_options).toEqual({ continuous_usage_stats: true, include_usage: true });
  }, 60_000);
});

describe("dialect on a translated request", () => {
  const ollama = SERVERS.find((s) => s.preset === "ollama");
  if (ollama === undefined) throw new Error("no ollama server");

  test.each([false, true])(
    "a Messages client through Ollama (stream %p): the cap Ollama reads, text back, usage",
    async (stream) => {
      upstreamOf(ollama).clear();
      const body = await call(ollama, stream, { client: "messages" });
      const text = stream ? streamText("messages", body) : answerText("messages", body);
      expect(text).toBe(ollama.text);
      const json = expectCall(ollama, upstreamOf(ollama).last());
      // Translation writes max_completion_tokens, which Ollama ignores (no cap at all): renamed.
      expect(json.max_tokens).toBe(50);
      expect("max_completion_tokens" in json).toBe(false);
      expect((json.messages as { role: string }[]).map((m) => m.role)).toEqual(["system", "user"]);
    },
    60_000,
  );
});

describe("start-up and billing", () => {
  test("serve refuses a base_url without a scheme: exit 1, the field path and the URL to write", async () => {
    const dir = tempDir();
    const file = join(dir, "modelgate.toml");
    writeFileSync(
      file,
      '[[channels]]\npreset = "ollama"\nname = "local"\nbase_url = "localhost:11434/v1"\nmodels = ["*"]\n',
    );
    const db = `sqlite://${join(dir, "modelgate.db")}`;
    const result = await runCli(["serve", "--listen", "127.0.0.1:0", "--db", db, "--config", file]);
    rmSync(dir, { recursive: true, force: true });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('channels[0].base_url: "localhost:11434/v1" is not an http(s) URL');
    expect(result.stderr).toContain("http://localhost:11434/v1");
  }, 60_000);

  test("the channel naming an unset credential variable was warned about at start", () => {
    const warnings = running()
      .logs()
      .split("\n")
      .filter((line) => line.includes('"level":"warn"') && line.includes('"msg":"config"'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("channels[8].api_key_env");
    expect(warnings[0]).toContain('MG_TEST_LMSTUDIO_UNSET of channel \\"lmstudio\\" is not set');
  });

  test("every request is billed exactly the server's reported usage, once, on its channel", async () => {
    // Each preset twice, vLLM's continuous stream, and the two translated Ollama calls.
    expect(expected.size).toBe(SERVERS.length * 2 + 3);
    // Stopping drains the usage writer: every record is in SQLite afterwards.
    expect(await running().stop()).toBe(0);
    const db = new Database(running().dbUrl.slice("sqlite://".length), { readonly: true });
    const rows = db
      .query(
        "SELECT request_id, input_tokens, cached_input_tokens, output_tokens, reasoning_tokens, usage_source, channels, cost_nanos, status, stream FROM usage_records",
      )
      .all() as Record<string, string | number>[];
    db.close();
    expect(rows).toHaveLength(expected.size);
    const byId = new Map(rows.map((r) => [String(r.request_id), r]));
    for (const [id, { server, stream }] of expected) {
      const row = byId.get(id);
      expect({ preset: server.preset, stream, row: row !== undefined }).toEqual({
        preset: server.preset,
        stream,
        row: true,
      });
      expect({
        preset: server.preset,
        stream,
        input: row?.input_tokens,
        cached: row?.cached_input_tokens,
        output: row?.output_tokens,
        reasoning: row?.reasoning_tokens,
        source: row?.usage_source,
        channels: row?.channels,
        status: row?.status,
      }).toEqual({
        preset: server.preset,
        stream,
        input: server.billed.input,
        cached: server.billed.cached,
        output: server.billed.output,
        reasoning: server.billed.reasoning,
        source: "reported",
        channels: server.preset,
        status: 200,
      });
      expect(Number(row?.cost_nanos)).toBeGreaterThan(0);
    }
  }, 60_000);
});
