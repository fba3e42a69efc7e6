// The model catalog: the fifteen public text and image ids (docs/api.md) and the embedding,
// transcription and speech models, their families and sizes. Anything not listed here (older ids,
// undated aliases, dotted messages ids) is "model not found".
import { type ModelId, toModelId } from "../base/types.ts";

/**
 * Text models speak Responses and Chat Completions; messages models speak Messages; image models
 * make images; embedding models turn text into vectors; transcription models turn speech into
 * text; speech models turn text into speech.
 */
export type Family = "text" | "image" | "messages" | "embedding" | "transcription" | "speech";

/** The audio formats of OpenAI's speech endpoint. */
export const SPEECH_FORMATS = ["mp3", "opus", "aac", "flac", "wav", "pcm"] as const;
export type SpeechFormat = (typeof SPEECH_FORMATS)[number];

/** The built-in voices of the first speech models; the 4o model adds four (the reference's list). */
const TTS_VOICES = ["alloy", "ash", "coral", "echo", "fable", "onyx", "nova", "sage", "shimmer"] as const;

/** What a speech model takes and gives (OpenAI's text-to-speech guide and API reference). */
export interface SpeechFacts {
  /** How it is billed: per character of input, or per token (text input, audio output). */
  billing: "characters" | "tokens";
  voices: readonly string[];
  /** Whether it takes `instructions`. */
  instructions: boolean;
  /** Whether it streams `stream_format: "sse"`. */
  sse: boolean;
}

/** The answer formats of OpenAI's transcription and translation endpoints. */
export const TRANSCRIPT_FORMATS = ["json", "text", "srt", "verbose_json", "vtt"] as const;
export type TranscriptFormat = (typeof TRANSCRIPT_FORMATS)[number];

/** What a transcription model takes and gives (OpenAI's speech-to-text guide and API reference). */
export interface TranscriptionFacts {
  /** How it is billed: per minute of audio, or per token (audio and text input, text output). */
  billing: "minute" | "tokens";
  /** The response formats it produces. */
  formats: readonly TranscriptFormat[];
  /** Whether `stream: true` streams `transcript.text.*` events. */
  streams: boolean;
  /** Whether it also serves /v1/audio/translations. */
  translates: boolean;
  /** The most output tokens an answer may hold (the reservation's bound for token models). */
  maxOutputTokens: number;
}

/** What an embedding model takes and gives (OpenAI's embeddings guide and API reference). */
export interface EmbeddingFacts {
  /** The length of a vector when the request asks for no `dimensions`. */
  dimensions: number;
  /** Whether a request may shorten the vectors with `dimensions` (1 … `dimensions`). */
  shortens: boolean;
  /** Tokens one input may hold. */
  maxInputTokens: number;
  /** Tokens all inputs of one request may hold together. */
  maxRequestTokens: number;
}

export interface ModelInfo {
  id: ModelId;
  family: Family;
  displayName: string;
  /** Unix seconds, shown as `created` (OpenAI) or `created_at` (Anthropic) in model lists. */
  created: number;
  ownedBy: string;
  /** Input plus output tokens the model accepts; 0 for image models. */
  contextTokens: number;
  /** Largest output a request may ask for; 0 for image models. */
  maxOutputTokens: number;
  /** How an Anthropic Messages upstream takes thinking for this model (translated requests). */
  thinking: AnthropicThinking;
  /** Embedding models only: vector size and input limits. */
  embedding?: EmbeddingFacts | undefined;
  /** Transcription models only: billing unit, formats, streaming. */
  transcription?: TranscriptionFacts | undefined;
  /** Speech models only: billing unit, voices, instructions, SSE. */
  speech?: SpeechFacts | undefined;
}

/**
 * The thinking form the Messages API takes per model, from Anthropic's model documentation:
 * `adaptive` models get `thinking: {type: "adaptive"}` with `output_config.effort` (Opus 4.7 takes
 * nothing else; on Opus 4.6 and Sonnet 4.6 `budget_tokens` is deprecated), `budget` models get
 * `thinking: {type: "enabled", budget_tokens}` and no effort. `efforts` lists the effort values the
 * model accepts, lowest first; `sampling` is false for models that refuse temperature, top_p and
 * top_k (Opus 4.7 answers 400 to any of them).
 */
export interface AnthropicThinking {
  form: "adaptive" | "budget";
  efforts: readonly string[];
  sampling: boolean;
}

const BUDGET: AnthropicThinking = { form: "budget", efforts: [], sampling: true };
const ADAPTIVE: AnthropicThinking = { form: "adaptive", efforts: ["low", "medium", "high"], sampling: true };

const day = (iso: string): number => Math.floor(Date.parse(`${iso}T00:00:00Z`) / 1000);

function text(
  id: string,
  displayName: string,
  created: string,
  contextTokens: number,
  maxOut: number,
): ModelInfo {
  return {
    id: toModelId(id),
    family: "text",
    displayName,
    created: day(created),
    ownedBy: "modelx",
    contextTokens,
    maxOutputTokens: maxOut,
    thinking: BUDGET,
  };
}

function messages(
  id: string,
  displayName: string,
  created: string,
  contextTokens: number,
  maxOut: number,
  thinking: AnthropicThinking = BUDGET,
): ModelInfo {
  return {
    id: toModelId(id),
    family: "messages",
    displayName,
    created: day(created),
    ownedBy: "modelz",
    contextTokens,
    maxOutputTokens: maxOut,
    thinking,
  };
}

function image(id: string, displayName: string, created: string): ModelInfo {
  return {
    id: toModelId(id),
    family: "image",
    displayName,
    created: day(created),
    ownedBy: "modelx",
    contextTokens: 0,
    maxOutputTokens: 0,
    thinking: BUDGET,
  };
}

/**
 * An embedding model. Sizes and limits are the published ones of the family each id stands for:
 * 8,192 tokens an input, 300,000 tokens a request, 2,048 inputs (src/wire/embeddings.ts).
 */
function embedding(
  id: string,
  displayName: string,
  created: string,
  dimensions: number,
  shortens: boolean,
): ModelInfo {
  return {
    id: toModelId(id),
    family: "embedding",
    displayName,
    created: day(created),
    ownedBy: "modelx",
    contextTokens: 8192,
    maxOutputTokens: 0,
    thinking: BUDGET,
    embedding: { dimensions, shortens, maxInputTokens: 8192, maxRequestTokens: 300_000 },
  };
}

/**
 * A transcription model. `modelx-transcribe-1` stands for the per-minute Whisper model (every
 * format, translations, no streaming), the 4o ids for the token-billed models that stream and
 * answer JSON only, up to 2,000 output tokens.
 */
function transcription(
  id: string,
  displayName: string,
  created: string,
  facts: TranscriptionFacts,
): ModelInfo {
  return {
    id: toModelId(id),
    family: "transcription",
    displayName,
    created: day(created),
    ownedBy: "modelx",
    contextTokens: 0,
    maxOutputTokens: facts.maxOutputTokens,
    thinking: BUDGET,
    transcription: facts,
  };
}

const STREAMING_TRANSCRIBER: TranscriptionFacts = {
  billing: "tokens",
  formats: ["json"],
  streams: true,
  translates: false,
  maxOutputTokens: 2000,
};

/**
 * A speech model. `modelx-tts-1` and `-1-hd` stand for the per-character models (no instructions,
 * no SSE), `modelx-tts-4o-mini` for the token-billed one (instructions, SSE, four more voices).
 */
function speech(id: string, displayName: string, created: string, facts: SpeechFacts): ModelInfo {
  return {
    id: toModelId(id),
    family: "speech",
    displayName,
    created: day(created),
    ownedBy: "modelx",
    contextTokens: 0,
    maxOutputTokens: 0,
    thinking: BUDGET,
    speech: facts,
  };
}

const CHARACTER_SPEECH: SpeechFacts = {
  billing: "characters",
  voices: TTS_VOICES,
  instructions: false,
  sse: false,
};

/**
 * The catalog in its published order (docs/api.md), then the embedding, transcription and speech
 * models. Context sizes are ours: the ids come without them.
 */
export const MODELS: readonly ModelInfo[] = [
  text("modelx-5.5", "ModelX 5.5", "2026-04-23", 1_050_000, 128_000),
  text("modelx-5.4", "ModelX 5.4", "2026-03-05", 1_050_000, 128_000),
  text("modelx-5.4-mini", "ModelX 5.4 mini", "2026-03-17", 400_000, 128_000),
  text("modelx-5.3-c", "ModelX 5.3 C", "2026-02-05", 400_000, 128_000),
  text("modelx-5.3-c-spark", "ModelX 5.3 C Spark", "2026-02-12", 128_000, 32_000),
  text("modelx-5.2", "ModelX 5.2", "2025-12-11", 400_000, 128_000),
  image("modelx-image-2", "ModelX Image 2", "2026-04-21"),
  image("modelx-image-1.5", "ModelX Image 1.5", "2025-12-16"),
  image("modelx-image-1", "ModelX Image 1", "2025-04-23"),
  messages("modelz-opus-4-7", "ModelZ Opus 4.7", "2026-04-16", 1_000_000, 128_000, {
    form: "adaptive",
    efforts: ["low", "medium", "high", "xhigh", "max"],
    sampling: false,
  }),
  messages("modelz-opus-4-6", "ModelZ Opus 4.6", "2026-02-05", 1_000_000, 128_000, {
    ...ADAPTIVE,
    efforts: ["low", "medium", "high", "max"],
  }),
  messages("modelz-opus-4-5-20251101", "ModelZ Opus 4.5", "2025-11-01", 200_000, 64_000),
  messages("modelz-sonnet-4-6", "ModelZ Sonnet 4.6", "2026-02-17", 1_000_000, 64_000, ADAPTIVE),
  messages("modelz-sonnet-4-5-20250929", "ModelZ Sonnet 4.5", "2025-09-29", 200_000, 64_000),
  messages("modelz-haiku-4-5-20251001", "ModelZ Haiku 4.5", "2025-10-01", 200_000, 64_000),
  embedding("modelx-embed-3-large", "ModelX Embed 3 large", "2024-01-25", 3072, true),
  embedding("modelx-embed-3-small", "ModelX Embed 3 small", "2024-01-25", 1536, true),
  embedding("modelx-embed-2", "ModelX Embed 2", "2022-12-15", 1536, false),
  transcription("modelx-transcribe-1", "ModelX Transcribe 1", "2023-03-01", {
    billing: "minute",
    formats: TRANSCRIPT_FORMATS,
    streams: false,
    translates: true,
    maxOutputTokens: 0,
  }),
  transcription("modelx-transcribe-4o", "ModelX Transcribe 4o", "2025-03-20", STREAMING_TRANSCRIBER),
  transcription(
    "modelx-transcribe-4o-mini",
    "ModelX Transcribe 4o mini",
    "2025-03-20",
    STREAMING_TRANSCRIBER,
  ),
  speech("modelx-tts-1", "ModelX TTS 1", "2023-11-06", CHARACTER_SPEECH),
  speech("modelx-tts-1-hd", "ModelX TTS 1 HD", "2023-11-06", CHARACTER_SPEECH),
  speech("modelx-tts-4o-mini", "ModelX TTS 4o mini", "2025-03-20", {
    billing: "tokens",
    voices: [...TTS_VOICES, "ballad", "verse", "marin", "cedar"],
    instructions: true,
    sse: true,
  }),
];

const BY_ID = new Map<string, ModelInfo>(MODELS.map((m) => [m.id, m]));

/** Looks a model up by its exact id; undefined for anything the catalog does not list. */
export function findModel(id: string): ModelInfo | undefined {
  return BY_ID.get(id);
}

/** A "not found" message that helps: it names the closest real id when the caller was near one. */
export function modelNotFoundMessage(id: string): string {
  const hint = suggestModel(id);
  const suffix = hint ? ` Did you mean \`${hint}\`?` : "";
  return `The model \`${id}\` was not found: it does not exist or is not served by this gateway. GET /v1/models lists the models available to your key.${suffix}`;
}

function suggestModel(id: string): string | undefined {
  const dashed = id.replaceAll(".", "-");
  const dated = MODELS.find((m) => m.family === "messages" && m.id.startsWith(`${dashed}-`));
  if (dated) return dated.id;
  if (dashed !== id && BY_ID.has(dashed)) return dashed;
  return undefined;
}
