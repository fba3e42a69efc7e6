// The simulator's POST /v1/audio/speech: real, decodable audio — 16-bit mono PCM at 24 kHz (the
// reference's `pcm`), the same in a WAV container, or MP3 encoded by lamejs — lasting as long as
// the input takes to say (15 characters a second at speed 1, at least 0.4 s), a tone that follows
// the input's characters so equal requests give equal audio. It is produced a quarter second at a
// time and sent as produced, 20 ms apart, as a real speech server streams: bytes (`stream_format:
// "audio"`) or `speech.audio.delta` events and a `speech.audio.done` with usage (`"sse"`). Formats
// it does not encode (opus, aac, flac) are refused with a 400 naming the three it does. Served over
// HTTP (`modelgate sim`) and in process by the `sim` channel kind.

import type { Mp3Encoder } from "@breezystack/lamejs";
import { findModel } from "../catalog/models.ts";
import { countTokens } from "../catalog/tokenizer.ts";
import { speech } from "../endpoints/speech/index.ts";
import { GatewayError } from "../wire/errors.ts";
import { characterCount, decodeSpeechBody, SPEECH_CONTENT_TYPES, type SpeechBody } from "../wire/speech.ts";
import { hashString } from "./random.ts";
import type { SimRoute } from "./routes.ts";
import { simError } from "./text/errors.ts";

export const SIM_SPEECH_RATE = 24_000;
/** Characters spoken a second at speed 1. */
export const SIM_CHARACTERS_PER_SECOND = 15;
/** Audio output tokens a second of speech (token-billed models). */
export const SIM_AUDIO_TOKENS_PER_SECOND = 20;
const CHUNK_SAMPLES = SIM_SPEECH_RATE / 4;
const PACE_MS = 20;
const PRODUCED = ["mp3", "wav", "pcm"] as const;

/** How long the simulator speaks `characters` at `speed`, in samples. */
export function speechSamples(characters: number, speed: number): number {
  const seconds = Math.max(0.4, characters / SIM_CHARACTERS_PER_SECOND) / speed;
  return Math.round(seconds * SIM_SPEECH_RATE);
}

/** Samples `[start, start + count)` of the voice: a tone per character, faded at its edges. */
function pcm(input: string, seed: number, total: number, start: number, count: number): Int16Array {
  const out = new Int16Array(count);
  const perChar = Math.max(1, Math.floor(total / Math.max(1, input.length)));
  for (let i = 0; i < count; i++) {
    const n = start + i;
    const char = input.charCodeAt(Math.min(input.length - 1, Math.floor(n / perChar)));
    const frequency = 180 + (hashString(String(char), seed) % 40) * 9;
    const within = (n % perChar) / perChar;
    const envelope = Math.sin(Math.PI * within);
    out[i] = Math.round(Math.sin((2 * Math.PI * frequency * n) / SIM_SPEECH_RATE) * 7000 * envelope);
  }
  return out;
}

function bytesOf(samples: Int16Array): Uint8Array {
  return new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength);
}

/** The 44-byte header of a 16-bit mono PCM WAV of `samples` samples. */
export function wavHeader(samples: number): Uint8Array {
  const data = samples * 2;
  const b = Buffer.alloc(44);
  b.write("RIFF", 0);
  b.writeUInt32LE(36 + data, 4);
  b.write("WAVE", 8);
  b.write("fmt ", 12);
  b.writeUInt32LE(16, 16);
  b.writeUInt16LE(1, 20);
  b.writeUInt16LE(1, 22);
  b.writeUInt32LE(SIM_SPEECH_RATE, 24);
  b.writeUInt32LE(SIM_SPEECH_RATE * 2, 28);
  b.writeUInt16LE(2, 32);
  b.writeUInt16LE(16, 34);
  b.write("data", 36);
  b.writeUInt32LE(data, 40);
  return new Uint8Array(b.buffer, b.byteOffset, 44);
}

/** The encoded audio, a quarter second at a time (the WAV header first, the MP3 flush last). */
function* audioChunks(
  body: SpeechBody,
  seed: number,
  mp3: typeof Mp3Encoder | undefined,
): Generator<Uint8Array> {
  const total = speechSamples(characterCount(body.input), body.speed);
  const encoder = mp3 === undefined ? undefined : new mp3(1, SIM_SPEECH_RATE, 48);
  if (body.response_format === "wav") yield wavHeader(total);
  for (let start = 0; start < total; start += CHUNK_SAMPLES) {
    const samples = pcm(body.input, seed, total, start, Math.min(CHUNK_SAMPLES, total - start));
    if (encoder === undefined) yield bytesOf(samples);
    else {
      const frames = encoder.encodeBuffer(samples);
      if (frames.length > 0) yield new Uint8Array(frames);
    }
  }
  if (encoder !== undefined) yield new Uint8Array(encoder.flush());
}

/** Chunks sent as produced: the first at once, each next one PACE_MS later. */
function paced(
  chunks: Generator<Uint8Array>,
  frame: (chunk: Uint8Array) => Uint8Array,
  end?: () => Uint8Array,
) {
  let first = true;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!first) await Bun.sleep(PACE_MS);
      first = false;
      const step = chunks.next();
      if (!step.done) {
        controller.enqueue(frame(step.value));
        return;
      }
      if (end) controller.enqueue(end());
      controller.close();
    },
    cancel() {
      chunks.return(undefined);
    },
  });
}

const encoder = new TextEncoder();
const sse = (event: Record<string, unknown>) => encoder.encode(`data: ${JSON.stringify(event)}\n\n`);

/** Answers one simulated speech request. */
export async function simSpeech(request: Request, seed: number): Promise<Response> {
  let body: SpeechBody;
  try {
    body = decodeSpeechBody(await request.json());
  } catch (thrown) {
    if (thrown instanceof GatewayError)
      return simError("openai", thrown.status, `simulator: ${thrown.message}`);
    return simError("openai", 400, `simulator: malformed JSON body: ${String(thrown)}`);
  }
  const format = body.response_format;
  if (!(PRODUCED as readonly string[]).includes(format)) {
    return simError(
      "openai",
      400,
      `simulator: response_format ${format} is not produced by the simulator; it produces ${PRODUCED.join(", ")}`,
    );
  }
  // The encoder (~250 KB of JavaScript) is loaded by the first mp3 request, not at start-up.
  const mp3 = format === "mp3" ? (await import("@breezystack/lamejs")).Mp3Encoder : undefined;
  const chunks = audioChunks(body, seed, mp3);
  if (body.stream_format === "sse") {
    const model = findModel(body.model)?.speech;
    if (model !== undefined && !model.sse)
      return simError("openai", 400, `simulator: ${body.model} does not stream sse`);
    const seconds = speechSamples(characterCount(body.input), body.speed) / SIM_SPEECH_RATE;
    const input = countTokens(body.input) + countTokens(body.instructions ?? "");
    const output = Math.ceil(seconds * SIM_AUDIO_TOKENS_PER_SECOND);
    const done = () =>
      sse({
        type: "speech.audio.done",
        usage: { input_tokens: input, output_tokens: output, total_tokens: input + output },
      });
    const stream = paced(
      chunks,
      (chunk) => sse({ type: "speech.audio.delta", audio: Buffer.from(chunk).toString("base64") }),
      done,
    );
    return new Response(stream, {
      headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
    });
  }
  return new Response(
    paced(chunks, (chunk) => chunk),
    { headers: { "content-type": SPEECH_CONTENT_TYPES[format] } },
  );
}

/** The simulator's HTTP route for speech. */
export const SIM_SPEECH_ROUTES: readonly SimRoute[] = [
  { method: "POST", path: speech.paths.speech, handle: (r, o) => simSpeech(r, o.seed) },
];
