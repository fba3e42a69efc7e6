// The simulator's POST /v1/audio/transcriptions and /v1/audio/translations, shaped like the real
// ones: the upload read as the gateway reads it (music-metadata: type and duration), then a
// deterministic transcript whose words are spread evenly over the real duration (about 2.5 words
// a second, drawn from a seeded hash of the file), in every response format — json, text, srt,
// verbose_json (segments of ten words, words when asked), vtt — and, for the streaming models,
// `transcript.text.delta` events and a `transcript.text.done` with token usage. Usage as the
// reference reports it: `{type: "duration", seconds}` for per-minute models, tokens for the others
// (10 audio tokens a second, the prompt's and the transcript's tokens counted). Served over HTTP
// (`modelgate sim`) and in process by the `sim` channel kind.

import { findModel, type TranscriptFormat } from "../catalog/models.ts";
import { countTokens } from "../catalog/tokenizer.ts";
import { speechToText } from "../endpoints/audio/index.ts";
import { readAudio } from "../wire/audio.ts";
import { GatewayError } from "../wire/errors.ts";
import { type AudioTask, decodeTranscriptionFields, formatContentType } from "../wire/transcriptions.ts";
import { Rng } from "./random.ts";
import type { SimRoute } from "./routes.ts";
import { simError } from "./text/errors.ts";

/** The simulator's audio token rate for token-billed models. */
export const SIM_AUDIO_TOKENS_PER_SECOND = 10;
const WORDS_PER_SECOND = 2.5;
const SEGMENT_WORDS = 10;

const VOCABULARY = [
  "the",
  "gateway",
  "records",
  "every",
  "request",
  "once",
  "and",
  "a",
  "model",
  "answers",
  "with",
  "words",
  "spoken",
  "clearly",
  "into",
  "microphone",
  "today",
  "we",
  "measure",
  "time",
  "in",
  "seconds",
  "river",
  "morning",
  "light",
  "over",
  "quiet",
  "hills",
  "people",
  "listen",
  "to",
  "music",
  "together",
] as const;

interface Word {
  word: string;
  start: number;
  end: number;
}

/** The transcript of `seconds` of audio, deterministic in the file's bytes and the seed. */
export function simWords(bytes: Uint8Array, seed: number, seconds: number): Word[] {
  const rng = new Rng(Number(Bun.hash.wyhash(bytes, BigInt(seed)) & 0xffffffffn));
  const count = Math.max(1, Math.round(seconds * WORDS_PER_SECOND));
  const step = seconds / count;
  const round = (x: number) => Math.round(x * 1000) / 1000;
  return Array.from({ length: count }, (_, i) => ({
    word: rng.pick(VOCABULARY),
    start: round(i * step),
    end: round((i + 1) * step),
  }));
}

function segmentsOf(words: Word[]) {
  const segments = [];
  for (let i = 0; i < words.length; i += SEGMENT_WORDS) {
    const part = words.slice(i, i + SEGMENT_WORDS);
    const text = ` ${part.map((w) => w.word).join(" ")}`;
    segments.push({
      id: segments.length,
      seek: 0,
      start: part[0]?.start ?? 0,
      end: part.at(-1)?.end ?? 0,
      text,
      tokens: [],
      temperature: 0,
      avg_logprob: -0.25,
      compression_ratio: 1.2,
      no_speech_prob: 0.01,
    });
  }
  return segments;
}

/** `HH:MM:SS,mmm` (srt) or `HH:MM:SS.mmm` (vtt). */
function clock(seconds: number, separator: "," | "."): string {
  const ms = Math.round(seconds * 1000);
  const pad = (n: number, width = 2) => String(n).padStart(width, "0");
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor(ms / 60_000) % 60;
  const s = Math.floor(ms / 1000) % 60;
  return `${pad(h)}:${pad(m)}:${pad(s)}${separator}${pad(ms % 1000, 3)}`;
}

interface Transcript {
  task: AudioTask;
  format: TranscriptFormat | "diarized_json";
  seconds: number;
  words: Word[];
  granularities: ("word" | "segment")[];
  usage: Record<string, unknown>;
}

function render(t: Transcript): string {
  const text = t.words.map((w) => w.word).join(" ");
  const segments = segmentsOf(t.words);
  switch (t.format) {
    case "json":
    case "diarized_json":
      return JSON.stringify({ text, usage: t.usage });
    case "text":
      return `${text}\n`;
    case "srt":
      return segments
        .map((s, i) => `${i + 1}\n${clock(s.start, ",")} --> ${clock(s.end, ",")}\n${s.text.trim()}\n\n`)
        .join("");
    case "vtt":
      return `WEBVTT\n\n${segments.map((s) => `${clock(s.start, ".")} --> ${clock(s.end, ".")}\n${s.text.trim()}\n\n`).join("")}`;
    case "verbose_json": {
      const wantWords = t.granularities.includes("word");
      const wantSegments = t.granularities.length === 0 || t.granularities.includes("segment");
      return JSON.stringify({
        task: t.task === "translation" ? "translate" : "transcribe",
        language: "english",
        duration: t.seconds,
        text,
        ...(wantWords ? { words: t.words } : {}),
        ...(wantSegments ? { segments } : {}),
        usage: t.usage,
      });
    }
    default: {
      const never: never = t.format;
      throw new Error(`unknown format ${String(never)}`);
    }
  }
}

/** The stream of a transcript: one delta a word, then the done event with usage. */
function streamOf(words: Word[], usage: Record<string, unknown>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const frame = (event: Record<string, unknown>) => encoder.encode(`data: ${JSON.stringify(event)}\n\n`);
  let i = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const word = words[i];
      if (word !== undefined) {
        controller.enqueue(
          frame({ type: "transcript.text.delta", delta: i === 0 ? word.word : ` ${word.word}` }),
        );
        i++;
        return;
      }
      const text = words.map((w) => w.word).join(" ");
      controller.enqueue(frame({ type: "transcript.text.done", text, usage }));
      controller.close();
    },
  });
}

/** Answers one simulated transcription or translation. */
export async function simTranscription(request: Request, seed: number, task: AudioTask): Promise<Response> {
  try {
    const form = await request.formData();
    const raw: Record<string, string[]> = {};
    let bytes: Uint8Array | undefined;
    for (const [name, value] of form.entries()) {
      if (typeof value === "string") raw[name] = [...(raw[name] ?? []), value];
      else if (name === "file") bytes = new Uint8Array(await value.arrayBuffer());
    }
    const fields = decodeTranscriptionFields(raw, task, speechToText.paths[task]);
    if (bytes === undefined) return simError("openai", 400, "simulator: file is required");
    const audio = await readAudio(bytes);
    const seconds = audio.durationMs / 1000;
    const words = simWords(bytes, seed, seconds);
    const tokens = findModel(fields.model)?.transcription?.billing === "tokens";
    const audioTokens = Math.ceil(seconds * SIM_AUDIO_TOKENS_PER_SECOND);
    const textTokens = countTokens(fields.prompt ?? "");
    const output = countTokens(words.map((w) => w.word).join(" "));
    const usage = tokens
      ? {
          type: "tokens",
          input_tokens: audioTokens + textTokens,
          input_token_details: { text_tokens: textTokens, audio_tokens: audioTokens },
          output_tokens: output,
          total_tokens: audioTokens + textTokens + output,
        }
      : { type: "duration", seconds: Math.ceil(seconds) };
    if (fields.stream && tokens) {
      return new Response(streamOf(words, usage), {
        headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
      });
    }
    const body = render({
      task,
      format: fields.responseFormat,
      seconds,
      words,
      granularities: fields.timestampGranularities,
      usage,
    });
    return new Response(body, { headers: { "content-type": formatContentType(fields.responseFormat) } });
  } catch (thrown) {
    if (thrown instanceof GatewayError)
      return simError("openai", thrown.status, `simulator: ${thrown.message}`);
    if (thrown instanceof TypeError)
      return simError("openai", 400, `simulator: malformed multipart body: ${thrown.message}`);
    throw thrown;
  }
}

/** The simulator's HTTP routes for speech to text. */
export const SIM_TRANSCRIPTION_ROUTES: readonly SimRoute[] = [
  {
    method: "POST",
    path: speechToText.paths.transcription,
    handle: (r, o) => simTranscription(r, o.seed, "transcription"),
  },
  {
    method: "POST",
    path: speechToText.paths.translation,
    handle: (r, o) => simTranscription(r, o.seed, "translation"),
  },
];
