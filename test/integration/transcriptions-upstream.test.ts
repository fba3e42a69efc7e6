// Speech to text through HTTP channels, against the compiled gateway: an OpenAI-kind channel
// whose recording upstream checks each multipart request against the published
// CreateTranscriptionRequest / CreateTranslationRequest (only the fields they list, the file part
// typed as the audio it is, with a matching file name); the vLLM and Speaches presets behind
// recording upstreams answering in their documented shapes (vLLM reports a duration, Speaches
// nothing); failover from a failing channel; each request billed exactly once.
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { PRESETS } from "../../src/config/presets.ts";
import { mp3File, wavFile } from "../helpers/audio.ts";
import { type RunningGateway, startGateway } from "../helpers/gateway.ts";
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

function upstream(script: (request: RecordedRequest) => Response | Promise<Response>): RecordingUpstream {
  const server = startRecordingUpstream(script);
  running.push(server);
  return server;
}

function post(
  gw: RunningGateway,
  path: string,
  fields: Record<string, string | string[]>,
  file: Uint8Array,
  name: string,
) {
  const form = new FormData();
  for (const [key, value] of Object.entries(fields)) {
    if (typeof value === "string") form.append(key, value);
    else for (const item of value) form.append(`${key}[]`, item);
  }
  form.append("file", new Blob([file]), name);
  return fetch(`${gw.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${gw.key}` },
    body: form,
  });
}

interface Row {
  request_id: string;
  status: number;
  cost_nanos: number;
  usage_source: string;
  channels: string;
  endpoint: string;
}

async function recordsAfterStop(gw: RunningGateway): Promise<Row[]> {
  expect(await gw.stop()).toBe(0);
  const db = new Database(gw.dbUrl.replace(/^sqlite:\/\//, ""), { readonly: true });
  try {
    return db.query("SELECT * FROM usage_records ORDER BY id").all() as Row[];
  } finally {
    db.close();
  }
}

/** The text fields CreateTranscriptionRequest / CreateTranslationRequest list (arrays as `name[]`). */
const TRANSCRIPTION_FIELDS = new Set([
  "model",
  "language",
  "prompt",
  "response_format",
  "temperature",
  "include[]",
  "timestamp_granularities[]",
  "stream",
  "chunking_strategy",
]);
const TRANSLATION_FIELDS = new Set(["model", "prompt", "response_format", "temperature"]);
const FORMATS = new Set(["json", "text", "srt", "verbose_json", "vtt"]);

/** What is wrong with a recorded multipart request, by the reference's request schemas. */
function problemsOf(request: RecordedRequest): string[] {
  const problems: string[] = [];
  const form = request.form;
  if (form === undefined) return ["not multipart"];
  const known = request.path.endsWith("/translations") ? TRANSLATION_FIELDS : TRANSCRIPTION_FIELDS;
  let files = 0;
  for (const [name, value] of form.entries()) {
    if (name === "file") {
      files++;
      if (typeof value === "string") problems.push("file is a text field");
      else {
        // Bun sends audio/wav as its registered alias audio/x-wav.
        if (!/^audio\/(x-wav|wav|mpeg|mp4|ogg|flac|webm)$/.test(value.type))
          problems.push(`file type ${value.type}`);
        if (!/\.(wav|mp3|m4a|ogg|flac|webm)$/.test(value.name)) problems.push(`file name ${value.name}`);
      }
      continue;
    }
    if (!known.has(name)) problems.push(`unknown field ${name}`);
    if (typeof value !== "string") problems.push(`${name} is a file`);
    if (name === "response_format" && !FORMATS.has(String(value))) problems.push(`format ${String(value)}`);
    if (name === "temperature" && !(Number(value) >= 0 && Number(value) <= 1)) problems.push("temperature");
  }
  if (files !== 1) problems.push(`${files} files`);
  if (typeof form.get("model") !== "string") problems.push("no model");
  return problems;
}

describe("an OpenAI-kind channel, checked against the published request schemas", () => {
  test("every field and format reaches it as the reference lists them; the file keeps its type", async () => {
    const problems: string[] = [];
    const server = upstream((request) => {
      problems.push(...problemsOf(request));
      const format = String(request.form?.get("response_format") ?? "json");
      if (format === "text")
        return new Response("hello there\n", { headers: { "content-type": "text/plain" } });
      if (format === "srt") return new Response("1\n00:00:00,000 --> 00:00:01,000\nhello there\n\n");
      if (format === "vtt") return new Response("WEBVTT\n\n00:00:00.000 --> 00:00:01.000\nhello there\n\n");
      if (format === "verbose_json") {
        return Response.json({
          task: "transcribe",
          language: "english",
          duration: 3.1,
          text: "hello there",
          usage: { type: "duration", seconds: 4 },
        });
      }
      return Response.json({ text: "hello there", usage: { type: "duration", seconds: 4 } });
    });
    const gw = await gateway(
      `
[[channels]]
kind = "openai-chat"
name = "openai"
base_url = "${server.url}/v1"
api_key_env = "MG_TEST_AUDIO_KEY"
models = ["modelx-transcribe-1"]
model_map = { "modelx-transcribe-1" = "whisper-1" }
`,
      { MG_TEST_AUDIO_KEY: "sk-audio" },
    );
    const wav = wavFile(3.1);
    for (const format of ["json", "text", "srt", "verbose_json", "vtt"]) {
      const fields: Record<string, string | string[]> = {
        model: "modelx-transcribe-1",
        response_format: format,
        language: "en",
        temperature: "0.2",
        prompt: "names: Ada",
      };
      if (format === "verbose_json") fields.timestamp_granularities = ["word", "segment"];
      const response = await post(gw, "/v1/audio/transcriptions", fields, wav, "clip.wav");
      expect({ format, status: response.status }).toEqual({ format, status: 200 });
      expect(await response.text()).toContain("hello there");
      expect(server.last().headers.authorization).toBe("Bearer sk-audio");
      expect(server.last().form?.get("model")).toBe("whisper-1");
    }
    const translated = await post(
      gw,
      "/v1/audio/translations",
      { model: "modelx-transcribe-1", prompt: "in English" },
      mp3File(1.5),
      "x.bin",
    );
    expect(translated.status).toBe(200);
    expect(server.last().path).toBe("/v1/audio/translations");
    const file = server.last().form?.get("file");
    expect(typeof file === "string" ? "" : file?.type).toBe("audio/mpeg");
    expect(problems).toEqual([]);
    const rows = await recordsAfterStop(gw);
    // Reported 4 s each ($0.006 a minute = 100,000 nano-USD a second); text, srt and vtt carry no
    // usage: the 3.1 s read from the file, billed as 4 whole seconds; the translation 2 s.
    expect(rows.map((r) => [r.endpoint, r.usage_source, r.cost_nanos])).toEqual([
      ["/v1/audio/transcriptions", "reported", 400_000],
      ["/v1/audio/transcriptions", "estimated", 400_000],
      ["/v1/audio/transcriptions", "estimated", 400_000],
      ["/v1/audio/transcriptions", "reported", 400_000],
      ["/v1/audio/transcriptions", "estimated", 400_000],
      ["/v1/audio/translations", "reported", 400_000],
    ]);
  }, 60_000);
});

describe.each([
  // vLLM: the OpenAI JSON with a duration usage.
  {
    preset: "vllm" as const,
    answer: { text: "hello", usage: { type: "duration", seconds: 3 } },
    source: "reported",
    cost: 300_000,
  },
  // Speaches: the transcript only; the gateway bills the 2.2 s it read as 3 s.
  { preset: "speaches" as const, answer: { text: "hello" }, source: "estimated", cost: 300_000 },
])("preset $preset", ({ preset, answer, source, cost }) => {
  test("transcription routed to its /v1/audio/transcriptions, billed once", async () => {
    const server = upstream(() => Response.json(answer));
    const path = new URL(PRESETS[preset].base_url).pathname.replace(/\/+$/, "");
    const gw = await gateway(`
[[channels]]
preset = "${preset}"
name = "${preset}"
base_url = "${server.url}${path}"
models = ["modelx-transcribe-1"]
model_map = { "modelx-transcribe-1" = "Systran/faster-whisper-small" }
`);
    const response = await post(
      gw,
      "/v1/audio/transcriptions",
      { model: "modelx-transcribe-1" },
      wavFile(2.2),
      "a.wav",
    );
    expect(response.status).toBe(200);
    expect(((await response.json()) as { text: string }).text).toBe("hello");
    expect(server.last().path).toBe("/v1/audio/transcriptions");
    expect(server.last().form?.get("model")).toBe("Systran/faster-whisper-small");
    const rows = await recordsAfterStop(gw);
    expect(rows.map((r) => [r.usage_source, r.cost_nanos, r.channels])).toEqual([[source, cost, preset]]);
  }, 60_000);
});

describe("routing", () => {
  test("a 503 channel is failed over to the simulator; one record, both channels", async () => {
    const failing = upstream(() =>
      Response.json({ error: { message: "busy", type: "server_error" } }, { status: 503 }),
    );
    const gw = await gateway(`
[[channels]]
kind = "openai-chat"
name = "first"
base_url = "${failing.url}/v1"
models = ["modelx-transcribe-4o"]
priority = 10
retries = 0

[[channels]]
kind = "sim"
name = "second"
models = ["modelx-transcribe-4o"]
`);
    const response = await post(
      gw,
      "/v1/audio/transcriptions",
      { model: "modelx-transcribe-4o" },
      wavFile(1.5),
      "a.wav",
    );
    expect(response.status).toBe(200);
    expect(failing.requests).toHaveLength(1);
    const rows = await recordsAfterStop(gw);
    expect(rows.map((r) => [r.status, r.channels, r.usage_source])).toEqual([
      [200, "first,second", "reported"],
    ]);
  }, 60_000);

  test("a channel whose preset does not serve speech is not routed speech", async () => {
    const ollama = upstream(() => Response.json({ text: "never" }));
    const gw = await gateway(`
[[channels]]
preset = "ollama"
name = "ollama"
base_url = "${ollama.url}/v1"
models = ["modelx-transcribe-1"]
`);
    const response = await post(
      gw,
      "/v1/audio/transcriptions",
      { model: "modelx-transcribe-1" },
      wavFile(1),
      "a.wav",
    );
    expect(response.status).toBe(503);
    expect(ollama.requests).toHaveLength(0);
  }, 60_000);
});
