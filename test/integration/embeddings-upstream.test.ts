// Embeddings through HTTP channels, against the compiled gateway: an OpenAI-kind channel whose
// recording upstream checks every request against the published request schema
// (test/contract/media-schemas.ts) and answers in the encoding asked; each preset that serves
// embeddings (Ollama, vLLM, llama.cpp's server, LM Studio) behind a recording upstream answering
// in that server's documented shape (floats only, vLLM's extra fields, LM Studio's zero usage);
// failover from a failing channel; and every request billed exactly once, from the server's
// reported tokens or, when it reports none, from the tokens the gateway counted.
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import * as v from "valibot";
import { PRESETS, type Preset, type PresetName } from "../../src/config/presets.ts";
import { vectorFromBase64, vectorToBase64 } from "../../src/wire/embeddings.ts";
import { EmbeddingRequestSchema, EmbeddingResponseSchema } from "../contract/media-schemas.ts";
import { type RunningGateway, startGateway, tempDir } from "../helpers/gateway.ts";
import {
  type RecordedRequest,
  type RecordingUpstream,
  startRecordingUpstream,
} from "../helpers/recording-upstream.ts";

const running: { stop(): Promise<unknown> }[] = [];
afterAll(async () => {
  for (const thing of running.reverse()) await thing.stop();
}, 30_000);

async function gateway(config: string, env: Record<string, string> = {}): Promise<RunningGateway> {
  const gw = await startGateway({ config, env });
  running.push({ stop: () => gw.dispose() });
  return gw;
}

function upstream(script: (request: RecordedRequest) => Response): RecordingUpstream {
  const server = startRecordingUpstream(script);
  running.push(server);
  return server;
}

function embed(gw: RunningGateway, body: Record<string, unknown>): Promise<Response> {
  return fetch(`${gw.url}/v1/embeddings`, {
    method: "POST",
    headers: { authorization: `Bearer ${gw.key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

interface Row {
  request_id: string;
  input_tokens: number;
  cost_nanos: number;
  usage_source: string;
  channels: string;
  status: number;
}

/** The records once the gateway stopped (stopping drains the usage writer). */
async function recordsAfterStop(gw: RunningGateway): Promise<Row[]> {
  expect(await gw.stop()).toBe(0);
  const db = new Database(gw.dbUrl.replace(/^sqlite:\/\//, ""), { readonly: true });
  try {
    return db.query("SELECT * FROM usage_records ORDER BY id").all() as Row[];
  } finally {
    db.close();
  }
}

/** A vector of `n` float32 values standing for `text` (what the recording servers answer). */
function vectorFor(text: string, n = 4): number[] {
  return Array.from({ length: n }, (_, i) => Math.fround(((text.length + i) % 7) / 10));
}

function textsOf(input: unknown): string[] {
  if (typeof input === "string") return [input];
  if (Array.isArray(input) && input.every((x) => typeof x === "string")) return input as string[];
  if (Array.isArray(input) && input.every((x) => typeof x === "number")) return [input.join(",")];
  return (input as number[][]).map((ids) => ids.join(","));
}

describe("an OpenAI-kind channel, checked against the published schemas", () => {
  test("requests match CreateEmbeddingRequest; answers reach the client in its encoding, billed as reported", async () => {
    const problems: string[] = [];
    const server = upstream((request) => {
      const checked = v.safeParse(EmbeddingRequestSchema, request.json);
      if (!checked.success) problems.push(JSON.stringify(checked.issues.map((i) => i.message)));
      if (request.path !== "/v1/embeddings") problems.push(`path ${request.path}`);
      if (request.headers.authorization !== "Bearer sk-upstream") problems.push("credential");
      const body = request.json as { input: unknown; encoding_format?: string; model: string };
      const texts = textsOf(body.input);
      return Response.json({
        object: "list",
        data: texts.map((text, index) => ({
          object: "embedding",
          index,
          embedding: body.encoding_format === "base64" ? vectorToBase64(vectorFor(text)) : vectorFor(text),
        })),
        model: body.model,
        usage: { prompt_tokens: 7 * texts.length, total_tokens: 7 * texts.length },
      });
    });
    const gw = await gateway(
      `
[[channels]]
kind = "openai-chat"
name = "openai"
base_url = "${server.url}/v1"
api_key_env = "MG_TEST_EMBED_KEY"
models = ["modelx-embed-3-small"]
model_map = { "modelx-embed-3-small" = "text-embedding-3-small" }
`,
      { MG_TEST_EMBED_KEY: "sk-upstream" },
    );
    const bodies: Record<string, unknown>[] = [
      { model: "modelx-embed-3-small", input: "one" },
      { model: "modelx-embed-3-small", input: ["one", "three"], encoding_format: "base64" },
      { model: "modelx-embed-3-small", input: [5, 6, 7], encoding_format: "float", dimensions: 4 },
      { model: "modelx-embed-3-small", input: [[5], [6, 7]], user: "end-user-1" },
    ];
    for (const body of bodies) {
      const response = await embed(gw, body);
      const json = (await response.json()) as { data: { embedding: number[] | string }[]; model: string };
      expect(response.status).toBe(200);
      expect(v.safeParse(EmbeddingResponseSchema, json).issues).toBeUndefined();
      expect(json.model).toBe("modelx-embed-3-small");
      const sent = server.last().json as Record<string, unknown>;
      expect(sent.model).toBe("text-embedding-3-small");
      expect(sent.input).toEqual(body.input);
      // The gateway asks a server that sends base64 for it, whatever the client asked.
      expect(sent.encoding_format).toBe("base64");
      const want = textsOf(body.input).map((t) => vectorFor(t));
      const got = json.data.map((d) =>
        typeof d.embedding === "string" ? vectorFromBase64(d.embedding) : d.embedding,
      );
      expect(got).toEqual(want);
    }
    expect(problems).toEqual([]);
    const rows = await recordsAfterStop(gw);
    expect(rows.map((r) => [r.input_tokens, r.usage_source, r.channels, r.cost_nanos])).toEqual([
      [7, "reported", "openai", 140],
      [14, "reported", "openai", 280],
      [7, "reported", "openai", 140],
      [14, "reported", "openai", 280],
    ]);
  }, 60_000);
});

/** How each preset's server answers /v1/embeddings, from its own documentation. */
interface PresetEmbedder {
  preset: PresetName;
  answer(body: { input: unknown; model: string }): unknown;
  /** The tokens billed for the request below: the server's own, or the gateway's count. */
  billed: number;
  source: "reported" | "estimated";
}

const list = (
  body: { input: unknown; model: string },
  usage: unknown,
  extra: Record<string, unknown> = {},
) => ({
  ...extra,
  object: "list",
  data: textsOf(body.input).map((text, index) => ({
    object: "embedding",
    embedding: vectorFor(text),
    index,
  })),
  model: body.model,
  usage,
});

const EMBEDDERS: PresetEmbedder[] = [
  // Ollama: the OpenAI list with floats and prompt/total tokens.
  {
    preset: "ollama",
    answer: (b) => list(b, { prompt_tokens: 9, total_tokens: 9 }),
    billed: 9,
    source: "reported",
  },
  // vLLM: an id and created time, usage with completion_tokens 0 and prompt_tokens_details.
  {
    preset: "vllm",
    answer: (b) =>
      list(
        b,
        { prompt_tokens: 11, total_tokens: 11, completion_tokens: 0, prompt_tokens_details: null },
        { id: "embd-1", created: 1_763_900_000 },
      ),
    billed: 11,
    source: "reported",
  },
  // llama.cpp's server: the OpenAI list, usage counted by its tokenizer.
  {
    preset: "llamacpp",
    answer: (b) => list(b, { prompt_tokens: 6, total_tokens: 6 }),
    billed: 6,
    source: "reported",
  },
  // LM Studio: its documented answer reports zero tokens; the gateway's count is billed.
  {
    preset: "lmstudio",
    answer: (b) => list(b, { prompt_tokens: 0, total_tokens: 0 }),
    billed: 5,
    source: "estimated",
  },
];

describe.each(EMBEDDERS)("preset $preset", (server) => {
  test("base64 asked by the client: floats asked of a server without base64, converted; billed once", async () => {
    const recording = upstream((request) =>
      Response.json(server.answer(request.json as { input: unknown; model: string })),
    );
    const path = new URL(PRESETS[server.preset].base_url).pathname.replace(/\/+$/, "");
    const gw = await gateway(`
[[channels]]
preset = "${server.preset}"
name = "${server.preset}"
base_url = "${recording.url}${path}"
models = ["modelx-embed-3-large"]
model_map = { "modelx-embed-3-large" = "local-embedder" }
`);
    // "the quick brown fox jumps": 5 tokens as the gateway counts them.
    const response = await embed(gw, {
      model: "modelx-embed-3-large",
      input: ["the quick brown fox jumps"],
      encoding_format: "base64",
    });
    const json = (await response.json()) as { data: { embedding: string }[] };
    expect(response.status).toBe(200);
    expect(vectorFromBase64(json.data[0]?.embedding ?? "")).toEqual(vectorFor("the quick brown fox jumps"));
    const sent = recording.last();
    expect(sent.path).toBe("/v1/embeddings");
    expect(sent.headers.authorization).toBeUndefined();
    const preset: Preset = PRESETS[server.preset];
    const base64 = preset.embeddings?.base64 === true;
    expect((sent.json as Record<string, unknown>).encoding_format).toBe(base64 ? "base64" : "float");
    expect((sent.json as Record<string, unknown>).model).toBe("local-embedder");
    if (!preset.embeddings?.token_input) {
      const tokens = await embed(gw, { model: "modelx-embed-3-large", input: [1, 2, 3] });
      expect(tokens.status).toBe(400);
      expect(((await tokens.json()) as { error: { param: string } }).error.param).toBe("input");
      expect(recording.requests).toHaveLength(1);
    }
    const rows = await recordsAfterStop(gw);
    const ok = rows.filter((r) => r.status === 200);
    expect(ok.map((r) => [r.input_tokens, r.usage_source, r.channels, r.cost_nanos])).toEqual([
      // modelx-embed-3-large: $0.13 per million tokens = 130 nano-USD a token.
      [server.billed, server.source, server.preset, server.billed * 130],
    ]);
    expect(rows.filter((r) => r.status !== 200).every((r) => r.cost_nanos === 0)).toBe(true);
  }, 60_000);
});

describe("failover", () => {
  test("a channel answering 500 is failed over; the request is billed once, both channels listed", async () => {
    const failing = upstream(() =>
      Response.json({ error: { message: "boom", type: "server_error" } }, { status: 500 }),
    );
    const gw = await gateway(`
[[channels]]
kind = "openai-chat"
name = "first"
base_url = "${failing.url}/v1"
models = ["modelx-embed-2"]
priority = 10
retries = 0

[[channels]]
kind = "sim"
name = "second"
models = ["modelx-embed-2"]
`);
    const response = await embed(gw, { model: "modelx-embed-2", input: "failover" });
    expect(response.status).toBe(200);
    expect(failing.requests).toHaveLength(1);
    const rows = await recordsAfterStop(gw);
    expect(rows.map((r) => [r.status, r.channels, r.input_tokens, r.usage_source])).toEqual([
      [200, "first,second", 2, "reported"],
    ]);
  }, 60_000);

  test("a server that breaks the contract (vectors missing) is a 502, not charged", async () => {
    const broken = upstream(() => Response.json({ object: "list", data: [], usage: { prompt_tokens: 3 } }));
    const gw = await gateway(`
[[channels]]
kind = "openai-chat"
name = "broken"
base_url = "${broken.url}/v1"
models = ["modelx-embed-2"]
`);
    const response = await embed(gw, { model: "modelx-embed-2", input: ["a", "b"] });
    expect(response.status).toBe(502);
    const rows = await recordsAfterStop(gw);
    expect(rows.map((r) => [r.status, r.cost_nanos, r.input_tokens])).toEqual([[502, 0, 0]]);
  }, 60_000);
});

describe("durability", () => {
  test("kill -9 after the answers: every answered request has exactly one record after the restart", async () => {
    const dir = tempDir();
    const first = await startGateway({ dir });
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const response = await embed(first, {
        model: "modelx-embed-3-small",
        input: [`line ${i}`, "and more"],
      });
      expect(response.status).toBe(200);
      await response.arrayBuffer();
      ids.push(response.headers.get("x-request-id") ?? "");
    }
    first.proc.kill(9);
    await first.proc.exited;
    const second = await startGateway({ dir, bootstrap: false });
    running.push({ stop: () => second.dispose().then(() => rmSync(dir, { recursive: true, force: true })) });
    const rows = await recordsAfterStop(second);
    expect(rows.map((r) => r.request_id).sort()).toEqual([...ids].sort());
    const db = new Database(second.dbUrl.replace(/^sqlite:\/\//, ""), { readonly: true });
    const balance = (
      db.query("SELECT balance_nanos AS b FROM accounts WHERE name = 'default'").get() as { b: number }
    ).b;
    db.close();
    const spent = rows.reduce((sum, r) => sum + r.cost_nanos, 0);
    expect(spent).toBeGreaterThan(0);
    expect(balance).toBe(10_000_000_000 - spent);
  }, 60_000);
});
