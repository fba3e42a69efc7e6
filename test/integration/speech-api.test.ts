// POST /v1/audio/speech against the compiled gateway: every bad input of the issue answered 4xx
// naming the field with nothing recorded or charged; the billing table (characters; tokens
// reported by SSE; tokens estimated without usage); audio relayed without buffering (a recording
// upstream holds the rest of its audio until the client has the first chunk); an OpenAI-kind
// channel checked against CreateSpeechRequest; the Kokoro preset billed once; failover.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as v from "valibot";
import { PRESETS } from "../../src/config/presets.ts";
import { createKey, type RunningGateway, startGateway } from "../helpers/gateway.ts";
import {
  type RecordedRequest,
  type RecordingUpstream,
  startRecordingUpstream,
} from "../helpers/recording-upstream.ts";
import { lastEventData } from "../helpers/sse-last.ts";
import { keyAnswers, waitFor } from "../helpers/wait.ts";

const running: { stop(): Promise<unknown> }[] = [];
let gw: RunningGateway;

beforeAll(async () => {
  gw = await startGateway();
  running.push({ stop: () => gw.dispose() });
}, 30_000);
afterAll(async () => {
  for (const thing of running.reverse()) await thing.stop();
}, 30_000);

function speak(
  target: RunningGateway,
  body: Record<string, unknown>,
  key = target.key ?? "",
): Promise<Response> {
  return fetch(`${target.url}/v1/audio/speech`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

interface Row {
  request_id: string;
  key_id: string;
  status: number;
  input_tokens: number;
  output_tokens: number;
  cost_nanos: number;
  usage_source: string;
  channels: string;
  detail: string;
}

function rowsOf(target: RunningGateway): Row[] {
  const db = new Database(target.dbUrl.replace(/^sqlite:\/\//, ""), { readonly: true });
  try {
    return db
      .query("SELECT * FROM usage_records WHERE endpoint = '/v1/audio/speech' ORDER BY id")
      .all() as Row[];
  } finally {
    db.close();
  }
}

function upstream(script: (request: RecordedRequest) => Response | Promise<Response>): RecordingUpstream {
  const server = startRecordingUpstream(script);
  running.push(server);
  return server;
}

async function gateway(config: string): Promise<RunningGateway> {
  const started = await startGateway({ config });
  running.push({ stop: () => started.dispose() });
  return started;
}

const BASE = { model: "modelx-tts-1", input: "Hello from the gateway.", voice: "alloy" };

describe("bad input: 4xx naming the field, nothing recorded", () => {
  const cases: [string, Record<string, unknown>, number, string][] = [
    ["input missing", { model: "modelx-tts-1", voice: "alloy" }, 400, "input"],
    ["input empty", { ...BASE, input: "" }, 400, "input"],
    ["input over 4,096 characters", { ...BASE, input: "é".repeat(4097) }, 400, "input"],
    ["voice missing", { model: "modelx-tts-1", input: "hi" }, 400, "voice"],
    ["an unknown voice", { ...BASE, voice: "darth" }, 400, "voice"],
    ["a 4o voice on tts-1", { ...BASE, voice: "marin" }, 400, "voice"],
    ["speed above 4", { ...BASE, speed: 4.5 }, 422, "speed"],
    ["speed below 0.25", { ...BASE, speed: 0.2 }, 422, "speed"],
    ["an unknown response_format", { ...BASE, response_format: "ogg" }, 400, "response_format"],
    ["an unknown stream_format", { ...BASE, stream_format: "chunks" }, 400, "stream_format"],
    ["sse on a model without it", { ...BASE, stream_format: "sse" }, 400, "stream_format"],
    ["instructions on a model without them", { ...BASE, instructions: "whisper" }, 400, "instructions"],
    ["an unknown field", { ...BASE, pitch: 2 }, 400, "pitch"],
    ["a transcription model", { ...BASE, model: "modelx-transcribe-1" }, 400, "model"],
    ["a text model", { ...BASE, model: "modelx-5.5" }, 400, "model"],
  ];
  let refused: { secret: string; id: string };
  beforeAll(async () => {
    refused = await createKey(gw, ["--account", "default", "--name", "bad-speech"]);
    await keyAnswers(gw.url, refused.secret, 200);
  }, 30_000);

  test.each(cases)("%s → %d naming %s", async (_label, body, status, param) => {
    const response = await speak(gw, body, refused.secret);
    const json = (await response.json()) as { error: { param: string | null; message: string } };
    expect({ status: response.status, param: json.error.param }).toEqual({ status, param });
    expect(json.error.message.length).toBeGreaterThan(10);
  });

  test("a format the simulator does not make: 400 naming the formats it makes, charged nothing", async () => {
    const response = await speak(gw, { ...BASE, response_format: "opus" }, refused.secret);
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toContain(
      "mp3, wav, pcm",
    );
  });

  test("none of them was charged: the key's records cost only its good request", async () => {
    const good = await speak(gw, BASE, refused.secret);
    expect(good.status).toBe(200);
    await good.arrayBuffer();
    const id = good.headers.get("x-request-id");
    await waitFor("the usage record", () => rowsOf(gw).find((r) => r.request_id === id));
    const mine = rowsOf(gw).filter((r) => r.key_id === refused.id);
    // The opus refusal came from the upstream after admission: recorded at no cost.
    expect(mine.map((r) => [r.status, r.cost_nanos > 0])).toEqual([
      [400, false],
      [200, true],
    ]);
  });
});

describe("billing", () => {
  test("characters: $15 a million characters, counted by the gateway", async () => {
    const response = await speak(gw, { ...BASE, input: "ünïcödé ✓ 12345" });
    await response.arrayBuffer();
    const id = response.headers.get("x-request-id");
    const row = await waitFor("the usage record", () => rowsOf(gw).find((r) => r.request_id === id));
    expect(row).toMatchObject({ usage_source: "estimated", cost_nanos: 15 * 15_000, input_tokens: 0 });
    expect(JSON.parse(row.detail)).toMatchObject({ characters: 15, response_format: "mp3", voice: "alloy" });
    const db = new Database(gw.dbUrl.replace(/^sqlite:\/\//, ""), { readonly: true });
    const stored = db
      .query("SELECT characters, audio_ms FROM usage_records WHERE request_id = ?")
      .get(id ?? "");
    db.close();
    expect(stored).toEqual({ characters: 15, audio_ms: 0 });
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).toMatch(
      /modelgate_speech_characters_total\{model="modelx-tts-1",key="default",channel="simulator"\} \d+/,
    );
  });

  test("tokens reported by the SSE done event: $0.60 text input, $12 audio output a million", async () => {
    const response = await speak(gw, {
      ...BASE,
      model: "modelx-tts-4o-mini",
      stream_format: "sse",
      voice: "cedar",
    });
    const text = await response.text();
    const usage = (JSON.parse(lastEventData(text)) as { usage: Record<string, number> }).usage;
    const id = response.headers.get("x-request-id");
    const row = await waitFor("the usage record", () => rowsOf(gw).find((r) => r.request_id === id));
    expect(row).toMatchObject({
      usage_source: "reported",
      input_tokens: usage.input_tokens,
      output_tokens: usage.output_tokens,
      cost_nanos: (usage.input_tokens ?? 0) * 600 + (usage.output_tokens ?? 0) * 12_000,
    });
  });

  test("tokens without usage (audio bytes): the counted input and the estimated audio", async () => {
    // 30 characters at 15 a second: 2 s, 40 audio tokens; "Thirty characters of input ok." is 6 tokens.
    const response = await speak(gw, {
      ...BASE,
      model: "modelx-tts-4o-mini",
      input: "Thirty characters of input ok.",
    });
    await response.arrayBuffer();
    const id = response.headers.get("x-request-id");
    const row = await waitFor("the usage record", () => rowsOf(gw).find((r) => r.request_id === id));
    expect(row).toMatchObject({
      usage_source: "estimated",
      input_tokens: 6,
      output_tokens: 40,
      cost_nanos: 6 * 600 + 40 * 12_000,
    });
  });
});

describe("keys and limits", () => {
  async function keyWith(args: string[]): Promise<{ secret: string; id: string }> {
    const key = await createKey(gw, args);
    await keyAnswers(gw.url, key.secret, 200);
    return key;
  }

  test("a group without speech models: 403; RPM 1: the second request is 429; neither recorded", async () => {
    expect((await gw.cli(["groups", "set", "no-speech", "--models", "modelx-embed-*"])).code).toBe(0);
    const denied = await keyWith(["--account", "default", "--group", "no-speech", "--name", "no-speech"]);
    expect((await speak(gw, BASE, denied.secret)).status).toBe(403);
    const limited = await keyWith(["--account", "default", "--name", "speech-rpm", "--rpm", "1"]);
    const first = await speak(gw, BASE, limited.secret);
    await first.arrayBuffer();
    expect(first.status).toBe(200);
    const second = await speak(gw, BASE, limited.secret);
    expect(second.status).toBe(429);
    await waitFor("the usage record", () =>
      rowsOf(gw).filter((r) => r.key_id === limited.id).length === 1 ? true : undefined,
    );
    expect(rowsOf(gw).filter((r) => r.key_id === denied.id)).toEqual([]);
  });
});

describe("relay", () => {
  test("audio is relayed as it arrives: the client has the first chunk before the upstream sends the rest", async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const server = upstream(() => {
      const stream = new ReadableStream<Uint8Array>({
        async start(controller) {
          controller.enqueue(new Uint8Array([0xff, 0xf3, 1, 2]));
          await held;
          controller.enqueue(new Uint8Array([3, 4, 5, 6]));
          controller.close();
        },
      });
      return new Response(stream, { headers: { "content-type": "audio/mpeg" } });
    });
    const target = await gateway(`
[[channels]]
kind = "openai-chat"
name = "slow"
base_url = "${server.url}/v1"
models = ["modelx-tts-1"]
`);
    const response = await speak(target, BASE);
    expect(response.headers.get("content-type")).toBe("audio/mpeg");
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    expect([...(first.value ?? [])]).toEqual([0xff, 0xf3, 1, 2]);
    release();
    const rest: number[] = [];
    for (let step = await reader.read(); !step.done; step = await reader.read()) rest.push(...step.value);
    expect(rest).toEqual([3, 4, 5, 6]);
  }, 30_000);
});

/** CreateSpeechRequest's fields, as the reference lists them. */
const SpeechRequestSchema = v.strictObject({
  model: v.string(),
  input: v.pipe(v.string(), v.maxLength(4096)),
  voice: v.union([v.string(), v.strictObject({ id: v.string() })]),
  instructions: v.optional(v.pipe(v.string(), v.maxLength(4096))),
  response_format: v.optional(v.picklist(["mp3", "opus", "aac", "flac", "wav", "pcm"])),
  speed: v.optional(v.pipe(v.number(), v.minValue(0.25), v.maxValue(4))),
  stream_format: v.optional(v.picklist(["sse", "audio"])),
});

describe("upstreams", () => {
  test("an OpenAI-kind channel gets CreateSpeechRequest bodies; opus passes through; billed once each", async () => {
    const problems: string[] = [];
    const server = upstream((request) => {
      const checked = v.safeParse(SpeechRequestSchema, request.json);
      if (!checked.success) problems.push(JSON.stringify(checked.issues.map((i) => i.message)));
      if (request.path !== "/v1/audio/speech") problems.push(request.path);
      return new Response(new Uint8Array([0x4f, 0x67, 0x67, 0x53]), {
        headers: { "content-type": "audio/opus" },
      });
    });
    const target = await gateway(`
[[channels]]
kind = "openai-chat"
name = "openai"
base_url = "${server.url}/v1"
models = ["modelx-tts-1-hd", "modelx-tts-4o-mini"]
model_map = { "modelx-tts-1-hd" = "tts-1-hd", "modelx-tts-4o-mini" = "gpt-4o-mini-tts" }
`);
    const opus = await speak(target, {
      ...BASE,
      model: "modelx-tts-1-hd",
      response_format: "opus",
      speed: 1.5,
    });
    expect(opus.headers.get("content-type")).toBe("audio/opus");
    expect([...new Uint8Array(await opus.arrayBuffer())]).toEqual([0x4f, 0x67, 0x67, 0x53]);
    expect(server.last().json).toMatchObject({ model: "tts-1-hd", response_format: "opus", speed: 1.5 });
    const instructed = await speak(target, {
      ...BASE,
      model: "modelx-tts-4o-mini",
      instructions: "cheerful",
      voice: "ballad",
    });
    await instructed.arrayBuffer();
    expect(server.last().json).toMatchObject({
      model: "gpt-4o-mini-tts",
      instructions: "cheerful",
      voice: "ballad",
    });
    expect(problems).toEqual([]);
    expect(await target.stop()).toBe(0);
    // tts-1-hd: $30 a million characters, 23 characters.
    expect(rowsOf(target).map((r) => [r.channels, r.usage_source, r.cost_nanos > 0])).toEqual([
      ["openai", "estimated", true],
      ["openai", "estimated", true],
    ]);
    expect(rowsOf(target)[0]?.cost_nanos).toBe(23 * 30_000);
  }, 30_000);

  test("Kokoro-FastAPI: its speech endpoint, model and voice as mapped, billed once in characters", async () => {
    const server = upstream(
      () => new Response(new Uint8Array(64).fill(7), { headers: { "content-type": "audio/mpeg" } }),
    );
    const path = new URL(PRESETS.kokoro.base_url).pathname.replace(/\/+$/, "");
    const target = await gateway(`
[[channels]]
preset = "kokoro"
name = "kokoro"
base_url = "${server.url}${path}"
models = ["modelx-tts-1", "modelx-tts-4o-mini"]
model_map = { "modelx-tts-1" = "kokoro", "modelx-tts-4o-mini" = "kokoro" }
`);
    const response = await speak(target, BASE);
    expect((await response.arrayBuffer()).byteLength).toBe(64);
    expect(server.last().path).toBe("/v1/audio/speech");
    expect(server.last().json).toMatchObject({ model: "kokoro", voice: "alloy", input: BASE.input });
    // Kokoro does not stream SSE: such a request is refused (400 naming stream_format, charged
    // nothing) before any channel is called.
    const sse = await speak(target, {
      ...BASE,
      model: "modelx-tts-4o-mini",
      voice: "marin",
      stream_format: "sse",
    });
    expect(sse.status).toBe(400);
    expect(((await sse.json()) as { error: { param: string } }).error.param).toBe("stream_format");
    const again = await speak(target, BASE);
    await again.arrayBuffer();
    expect(server.requests).toHaveLength(2);
    expect(await target.stop()).toBe(0);
    expect(rowsOf(target).map((r) => [r.status, r.channels, r.cost_nanos])).toEqual([
      [200, "kokoro", 23 * 15_000],
      [400, "", 0],
      [200, "kokoro", 23 * 15_000],
    ]);
  }, 30_000);

  test("failover: a channel answering 500 before any audio is failed over", async () => {
    const failing = upstream(() =>
      Response.json({ error: { message: "down", type: "server_error" } }, { status: 500 }),
    );
    const target = await gateway(`
[[channels]]
kind = "openai-chat"
name = "first"
base_url = "${failing.url}/v1"
models = ["modelx-tts-1"]
priority = 10
retries = 0

[[channels]]
kind = "sim"
name = "second"
models = ["modelx-tts-1"]
`);
    const response = await speak(target, { ...BASE, response_format: "wav" });
    expect(response.status).toBe(200);
    expect((await response.arrayBuffer()).byteLength).toBeGreaterThan(44);
    expect(await target.stop()).toBe(0);
    expect(rowsOf(target).map((r) => [r.status, r.channels])).toEqual([[200, "first,second"]]);
  }, 30_000);
});
