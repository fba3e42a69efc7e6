// The official OpenAI TypeScript SDK, unchanged, against the running gateway's speech endpoint:
// audio.speech.create streamed to a file in both stream formats (audio bytes; SSE with
// speech.audio.delta / speech.audio.done), every format the simulator produces decodable (mp3 and
// wav read back by music-metadata with the expected duration, pcm of the expected length),
// through the in-process simulator and through an OpenAI-kind channel to the simulator over HTTP.
import { afterAll, describe, expect, test } from "bun:test";
import { createWriteStream, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { Readable } from "node:stream";
import { finished } from "node:stream/promises";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { parseBuffer } from "music-metadata";
import OpenAI from "openai";
import { tempDir } from "../helpers/gateway.ts";
import { sdkRig } from "../helpers/sdk-rig.ts";

const dir = tempDir("modelgate-speech-sdk-");

const rig = sdkRig({
  inProcess: ["modelx-tts-1", "modelx-tts-4o-mini"],
  overHttp: ["modelx-tts-1-hd"],
  kind: "openai-chat",
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

// 60 characters: 4 s of speech at 15 characters a second, 2 s at speed 2.
const INPUT = "The quick brown fox jumps over the lazy dog by the riverbank";

/** Streams the SDK's response body to a file as it arrives; the file's bytes. */
async function toFile(response: Response, name: string): Promise<Uint8Array> {
  const path = join(dir, name);
  const body = response.body;
  if (body === null) throw new Error("no body");
  await finished(
    Readable.fromWeb(body as unknown as WebReadableStream<Uint8Array>).pipe(createWriteStream(path)),
  );
  return new Uint8Array(readFileSync(path));
}

describe.each([
  ["sim channel", "modelx-tts-1"],
  ["openai-kind channel", "modelx-tts-1-hd"],
])("openai SDK speech, %s", (_label, model) => {
  test("mp3 (the default) streamed to a file decodes to the expected duration", async () => {
    const response = await rig.client.audio.speech.create({ model, input: INPUT, voice: "alloy" });
    expect(response.headers.get("content-type")).toBe("audio/mpeg");
    const bytes = await toFile(response, `${model}.mp3`);
    const metadata = await parseBuffer(bytes, { size: bytes.byteLength });
    expect(metadata.format.container).toBe("MPEG");
    expect(metadata.format.duration).toBeGreaterThan(3.9);
    expect(metadata.format.duration).toBeLessThan(4.3);
  });

  test("wav at speed 2 and pcm: real 24 kHz 16-bit mono audio", async () => {
    const wav = await toFile(
      await rig.client.audio.speech.create({
        model,
        input: INPUT,
        voice: "nova",
        response_format: "wav",
        speed: 2,
      }),
      `${model}.wav`,
    );
    const metadata = await parseBuffer(wav, { size: wav.byteLength });
    expect([metadata.format.container, metadata.format.sampleRate, metadata.format.duration]).toEqual([
      "WAVE",
      24_000,
      2,
    ]);
    const pcm = await toFile(
      await rig.client.audio.speech.create({ model, input: INPUT, voice: "nova", response_format: "pcm" }),
      `${model}.pcm`,
    );
    expect(pcm.byteLength).toBe(4 * 24_000 * 2);
  });
});

describe("SSE", () => {
  test("stream_format sse: deltas that join into decodable audio, then done with usage", async () => {
    const response = await rig.client.audio.speech.create({
      model: "modelx-tts-4o-mini",
      input: INPUT,
      voice: "marin",
      instructions: "Speak slowly.",
      response_format: "wav",
      stream_format: "sse",
    });
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    const text = new TextDecoder().decode(await toFile(response, "sse.txt"));
    const events = text
      .split("\n\n")
      .filter((b) => b.startsWith("data: "))
      .map((b) => JSON.parse(b.slice(6)) as { type: string; audio?: string; usage?: Record<string, number> });
    const audio = Buffer.concat(
      events.filter((e) => e.type === "speech.audio.delta").map((e) => Buffer.from(e.audio ?? "", "base64")),
    );
    const metadata = await parseBuffer(audio, { size: audio.byteLength });
    expect(metadata.format.duration).toBe(4);
    const done = events.at(-1);
    expect(done?.type).toBe("speech.audio.done");
    expect(done?.usage?.output_tokens).toBe(80);
    expect(done?.usage?.total_tokens).toBe((done?.usage?.input_tokens ?? 0) + 80);
  });

  test("a bad request is an SDK error naming the field", async () => {
    const error = await rig.client.audio.speech
      .create({ model: "modelx-tts-1", input: INPUT, voice: "alloy", speed: 5 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.UnprocessableEntityError);
    expect((error as InstanceType<typeof OpenAI.APIError>).param).toBe("speed");
  });
});
