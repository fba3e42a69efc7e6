// The official OpenAI TypeScript SDK, unchanged, against the running gateway's speech-to-text:
// audio.transcriptions.create with a file stream in every response_format (json, text, srt,
// verbose_json with word and segment timestamps, vtt) and with stream: true, and
// audio.translations.create — through the in-process simulator and through an OpenAI-kind
// channel to the simulator over HTTP. The simulator reads the file's real duration: segments,
// words and cues end at it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createReadStream, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import OpenAI from "openai";
import { mp3File, wavFile } from "../helpers/audio.ts";
import { tempDir } from "../helpers/gateway.ts";
import { sdkRig } from "../helpers/sdk-rig.ts";

const dir = tempDir("modelgate-audio-sdk-");
const WAV = join(dir, "speech.wav");
const MP3 = join(dir, "speech.mp3");

const rig = sdkRig({
  inProcess: ["modelx-transcribe-1", "modelx-transcribe-4o"],
  overHttp: ["modelx-transcribe-4o-mini"],
  kind: "openai-chat",
});
beforeAll(() => {
  writeFileSync(WAV, wavFile(7.25));
  writeFileSync(MP3, mp3File(3));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const clock = (s: string) => {
  const [h, m, rest] = s.replace(",", ".").split(":");
  return Number(h) * 3600 + Number(m) * 60 + Number(rest);
};

describe("openai SDK speech to text", () => {
  test("json: text and duration usage", async () => {
    const result = await rig.client.audio.transcriptions.create({
      model: "modelx-transcribe-1",
      file: createReadStream(WAV),
    });
    expect(result.text.split(" ").length).toBe(18); // 2.5 words a second of 7.25 s
    expect(result.usage).toEqual({ type: "duration", seconds: 8 });
  });

  test("text, srt and vtt: the last cue ends at the file's duration", async () => {
    const text = await rig.client.audio.transcriptions.create({
      model: "modelx-transcribe-1",
      file: createReadStream(WAV),
      response_format: "text",
    });
    expect(typeof text).toBe("string");
    expect(text.trim().split(" ")).toHaveLength(18);
    const srt = await rig.client.audio.transcriptions.create({
      model: "modelx-transcribe-1",
      file: createReadStream(WAV),
      response_format: "srt",
    });
    const srtEnds = [...srt.matchAll(/--> (\d\d:\d\d:\d\d,\d\d\d)/g)].map((m) => clock(m[1] ?? ""));
    expect(srtEnds.at(-1)).toBeCloseTo(7.25, 3);
    const vtt = await rig.client.audio.transcriptions.create({
      model: "modelx-transcribe-1",
      file: createReadStream(WAV),
      response_format: "vtt",
    });
    expect(vtt.startsWith("WEBVTT")).toBe(true);
    const vttEnds = [...vtt.matchAll(/--> (\d\d:\d\d:\d\d\.\d\d\d)/g)].map((m) => clock(m[1] ?? ""));
    expect(vttEnds).toEqual(srtEnds);
  });

  test("verbose_json with word and segment timestamps", async () => {
    const result = await rig.client.audio.transcriptions.create({
      model: "modelx-transcribe-1",
      file: createReadStream(WAV),
      response_format: "verbose_json",
      timestamp_granularities: ["word", "segment"],
    });
    expect(result.duration).toBeCloseTo(7.25, 3);
    expect(result.words).toHaveLength(18);
    expect(result.words?.at(-1)?.end).toBeCloseTo(7.25, 3);
    expect(result.segments?.map((s) => s.id)).toEqual([0, 1]);
    expect(result.segments?.at(-1)?.end).toBeCloseTo(7.25, 3);
    expect(result.text).toBe((result.words ?? []).map((w) => w.word).join(" "));
  });

  test.each([
    ["sim channel", "modelx-transcribe-4o"],
    ["openai-kind channel", "modelx-transcribe-4o-mini"],
  ])("%s: stream: true yields deltas then done with token usage", async (_label, model) => {
    const stream = await rig.client.audio.transcriptions.create({
      model,
      file: createReadStream(MP3),
      stream: true,
      prompt: "a short recording",
    });
    let deltas = "";
    let done: { text: string; usage?: { input_tokens: number; output_tokens: number } } | undefined;
    for await (const event of stream) {
      if (event.type === "transcript.text.delta") deltas += event.delta;
      if (event.type === "transcript.text.done") done = event as typeof done;
    }
    expect(done?.text).toBe(deltas);
    expect(done?.usage?.input_tokens).toBeGreaterThan(30);
    expect(done?.usage?.output_tokens).toBeGreaterThan(0);
  });

  test("openai-kind channel: json from a token model", async () => {
    const result = await rig.client.audio.transcriptions.create({
      model: "modelx-transcribe-4o-mini",
      file: createReadStream(MP3),
    });
    expect(result.text.length).toBeGreaterThan(0);
    expect(result.usage?.type).toBe("tokens");
  });

  test("translations", async () => {
    const result = await rig.client.audio.translations.create({
      model: "modelx-transcribe-1",
      file: createReadStream(MP3),
      response_format: "verbose_json",
    });
    expect(result.text.length).toBeGreaterThan(0);
    // The SDK types a translation as {text}; verbose_json carries the duration too.
    expect((result as unknown as { duration: number }).duration).toBeGreaterThan(2.9);
  });

  test("a bad request is an SDK BadRequestError naming the field", async () => {
    const error = await rig.client.audio.transcriptions
      .create({ model: "modelx-transcribe-1", file: createReadStream(MP3), stream: true })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe("stream");
  });
});
