// POST /v1/audio/transcriptions and /v1/audio/translations on the wire (OpenAI's
// CreateTranscriptionRequest / CreateTranslationRequest): the multipart text fields checked one by
// one (400 naming the field, 422 for a temperature out of range), the usage an answer reports
// (tokens, or a duration), and the stream events (`transcript.text.delta` / `.done`). No I/O.
import * as v from "valibot";
import { TRANSCRIPT_FORMATS, type TranscriptFormat } from "../catalog/models.ts";
import { parseOrThrow } from "./decode.ts";
import { GatewayError } from "./errors.ts";

export type AudioTask = "transcription" | "translation";

/** The request's fields, read from the form (the file is read apart). */
export interface TranscriptionFields {
  model: string;
  language?: string | undefined;
  prompt?: string | undefined;
  responseFormat: TranscriptFormat | "diarized_json";
  temperature?: number | undefined;
  timestampGranularities: ("word" | "segment")[];
  include: "logprobs"[];
  /** `auto`, or a server VAD object as JSON text: passed on as sent. */
  chunkingStrategy?: string | undefined;
  stream: boolean;
}

const FORMATS = [...TRANSCRIPT_FORMATS, "diarized_json"] as const;

const Fields = v.object({
  model: v.pipe(v.string(), v.minLength(1, "model must not be empty")),
  language: v.optional(
    v.pipe(v.string(), v.regex(/^[a-z]{2,3}$/i, "language must be an ISO-639-1 code such as en")),
  ),
  prompt: v.optional(v.string()),
  response_format: v.optional(
    v.picklist(FORMATS, `response_format must be one of ${FORMATS.join(", ")}`),
    "json",
  ),
  temperature: v.optional(
    v.pipe(
      v.string(),
      v.transform(Number),
      v.number("temperature must be a number"),
      v.minValue(0),
      v.maxValue(1),
    ),
  ),
  stream: v.optional(v.picklist(["true", "false"], "stream must be true or false"), "false"),
  chunking_strategy: v.optional(v.string()),
});

/** The fields each endpoint takes (a repeated field may be sent with or without `[]`). */
const KNOWN: Readonly<Record<AudioTask, ReadonlySet<string>>> = {
  transcription: new Set([
    "model",
    "language",
    "prompt",
    "response_format",
    "temperature",
    "timestamp_granularities",
    "include",
    "chunking_strategy",
    "stream",
  ]),
  translation: new Set(["model", "prompt", "response_format", "temperature"]),
};

function bad(message: string, param: string): GatewayError {
  return new GatewayError("invalid_request", message, { param });
}

/** The form's text fields checked for `task` (served on `path`); every field once, unknown ones named. */
export function decodeTranscriptionFields(
  raw: Record<string, string[]>,
  task: AudioTask,
  path: string,
): TranscriptionFields {
  const single: Record<string, string> = {};
  const lists: Record<string, string[]> = {};
  for (const [name, values] of Object.entries(raw)) {
    const field = name.endsWith("[]") ? name.slice(0, -2) : name;
    if (!KNOWN[task].has(field)) {
      throw bad(`${field} is not a field of ${path}; remove it`, field);
    }
    if (field === "timestamp_granularities" || field === "include") {
      lists[field] = [...(lists[field] ?? []), ...values];
      continue;
    }
    if (values.length > 1) throw bad(`${field} was sent ${values.length} times; send it once`, field);
    single[field] = values[0] ?? "";
  }
  if (single.model === undefined) throw bad("model is required: the transcription model to use", "model");
  const fields = parseOrThrow(Fields, single);
  const granularities = (lists.timestamp_granularities ?? []).map((g): "word" | "segment" => {
    if (g !== "word" && g !== "segment") {
      throw bad(
        `timestamp_granularities[] must be word or segment, got ${JSON.stringify(g)}`,
        "timestamp_granularities",
      );
    }
    return g;
  });
  if (granularities.length > 0 && fields.response_format !== "verbose_json") {
    throw bad(
      `timestamp_granularities[] is only taken with response_format verbose_json (got ${fields.response_format}); ask for verbose_json or leave it out`,
      "timestamp_granularities",
    );
  }
  const include = (lists.include ?? []).map((i): "logprobs" => {
    if (i !== "logprobs") throw bad(`include[] takes logprobs only, got ${JSON.stringify(i)}`, "include");
    return i;
  });
  return {
    model: fields.model,
    language: fields.language,
    prompt: fields.prompt,
    responseFormat: fields.response_format,
    temperature: fields.temperature,
    timestampGranularities: granularities,
    include,
    chunkingStrategy: fields.chunking_strategy,
    stream: fields.stream === "true",
  };
}

/** The usage a transcription answer reports: tokens (4o models) or a duration (per-minute models). */
export const TranscriptUsageSchema = v.variant("type", [
  v.object({
    type: v.literal("tokens"),
    input_tokens: v.number(),
    input_token_details: v.optional(
      v.object({ text_tokens: v.optional(v.number()), audio_tokens: v.optional(v.number()) }),
    ),
    output_tokens: v.number(),
  }),
  v.object({ type: v.literal("duration"), seconds: v.number() }),
]);

export type TranscriptUsage = v.InferOutput<typeof TranscriptUsageSchema>;

/** A JSON answer (json, verbose_json), read for its text and usage. */
export const TranscriptAnswerSchema = v.object({
  text: v.string(),
  usage: v.optional(v.unknown()),
});

/** The usage in an answer or a done event, when it is one of the reference's shapes. */
export function usageOf(value: unknown): TranscriptUsage | undefined {
  const parsed = v.safeParse(TranscriptUsageSchema, value);
  return parsed.success ? parsed.output : undefined;
}

/** The stream events of a streamed transcription. */
export const TranscriptEventSchema = v.variant("type", [
  v.object({ type: v.literal("transcript.text.delta"), delta: v.string() }),
  v.object({ type: v.literal("transcript.text.done"), text: v.string(), usage: v.optional(v.unknown()) }),
]);

/** The media type of an answer in `format`. */
export function formatContentType(format: TranscriptFormat | "diarized_json"): string {
  switch (format) {
    case "json":
    case "verbose_json":
    case "diarized_json":
      return "application/json";
    case "text":
      return "text/plain; charset=utf-8";
    case "srt":
      return "application/x-subrip; charset=utf-8";
    case "vtt":
      return "text/vtt; charset=utf-8";
    default: {
      const never: never = format;
      throw new Error(`unknown format ${String(never)}`);
    }
  }
}
