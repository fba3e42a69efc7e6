// Upstream presets: `preset = "ollama"` on a `[[channels]]` entry fills the defaults of a server
// people run (protocol kind, base URL, credential variable) and selects its Chat Completions
// dialect (the quirks table below), each of which the entry may still override. The facts and
// where they come from are in docs/upstreams.md; the quirks are applied in one place,
// src/upstream/openai-chat/dialects.ts, as the last step before the HTTP call.
import * as v from "valibot";

/** How a server's Chat Completions dialect differs from OpenAI's. */
export const QuirksSchema = v.strictObject({
  /**
   * The output cap the server reads: `max_tokens` (a `max_completion_tokens` is renamed),
   * `max_completion_tokens` (a `max_tokens` is renamed), or `either` (sent as it is).
   */
  max_tokens_field: v.optional(v.picklist(["max_tokens", "max_completion_tokens", "either"])),
  /** Whether `role: "developer"` messages are understood; false sends them as `system`. */
  developer_role: v.optional(v.boolean()),
  /** Whether `parallel_tool_calls` is understood; false drops the field. */
  parallel_tool_calls: v.optional(v.boolean()),
  /**
   * How the server takes a reasoning effort: `reasoning_effort` (as sent), `reasoning.effort`
   * (moved into a `reasoning` object), or `drop` (removed).
   */
  reasoning_effort: v.optional(v.picklist(["reasoning_effort", "reasoning.effort", "drop"])),
});

export type QuirksConfig = v.InferOutput<typeof QuirksSchema>;
export type Quirks = { [K in keyof QuirksConfig]-?: Exclude<QuirksConfig[K], undefined> };

/** OpenAI's own dialect: nothing is changed. */
export const OPENAI_QUIRKS: Quirks = {
  max_tokens_field: "either",
  developer_role: true,
  parallel_tool_calls: true,
  reasoning_effort: "reasoning_effort",
};

export type PresetKind = "openai-responses" | "openai-chat" | "anthropic";

/** The OpenAI-style endpoints besides text that a server may offer (src/upstream/media.ts routes by them). */
export type MediaEndpoint = "embeddings" | "transcriptions" | "translations" | "speech";

/** What a server's `/v1/embeddings` takes beyond strings (its documentation says; the gateway adapts). */
export interface EmbeddingsDialect {
  /** Token-id arrays as `input`; a channel without them is skipped for token inputs. */
  token_input: boolean;
  /** `encoding_format: "base64"`; without it the gateway asks for floats and encodes them itself. */
  base64: boolean;
}

/** The dialect of a channel without a preset: OpenAI's reference. */
export const OPENAI_EMBEDDINGS: EmbeddingsDialect = { token_input: true, base64: true };
/** Strings and floats only: what every server that serves embeddings documents. */
const PLAIN_EMBEDDINGS: EmbeddingsDialect = { token_input: false, base64: false };

export interface Preset {
  /** What the operator reads in errors and docs. */
  title: string;
  kind: PresetKind;
  base_url: string;
  /** The variable holding the credential by default; undefined for servers that need none. */
  api_key_env?: string;
  /** Which header carries the credential (follows from `kind`; shown in the docs and errors). */
  auth: "Authorization: Bearer" | "x-api-key" | "none (optional Bearer)";
  quirks: Quirks;
  /** Which image inputs the server takes (its own error answers otherwise; not rewritten here). */
  images: string;
  /** How the server reports usage, for docs/upstreams.md and the lead's dialect tests. */
  usage: string;
  /** The media endpoints it serves (docs/endpoints-media.md); a channel is not routed others. */
  media: readonly MediaEndpoint[];
  /** Its `/v1/embeddings` dialect, when it serves embeddings. */
  embeddings?: EmbeddingsDialect;
  /** Whether its `/v1/audio/speech` streams `stream_format: "sse"` (channels without are skipped for it). */
  speech_sse?: boolean;
}

/** Servers people run; facts from each one's own documentation or server code (docs/upstreams.md). */
export const PRESETS = {
  openai: {
    title: "OpenAI",
    kind: "openai-responses",
    base_url: "https://api.openai.com/v1",
    api_key_env: "OPENAI_API_KEY",
    auth: "Authorization: Bearer",
    quirks: OPENAI_QUIRKS,
    images: "URLs and data: URLs",
    usage:
      "Responses: response.completed carries usage; Chat: a last chunk with empty choices on include_usage",
    speech_sse: true,
    media: ["embeddings", "transcriptions", "translations", "speech"],
    embeddings: OPENAI_EMBEDDINGS,
  },
  anthropic: {
    title: "Anthropic",
    kind: "anthropic",
    base_url: "https://api.anthropic.com",
    api_key_env: "ANTHROPIC_API_KEY",
    auth: "x-api-key",
    quirks: OPENAI_QUIRKS,
    images: "base64 and URL image blocks",
    usage: "message_start has input and cache tokens, message_delta the cumulative output_tokens",
    media: [],
  },
  openrouter: {
    title: "OpenRouter",
    kind: "openai-chat",
    base_url: "https://openrouter.ai/api/v1",
    api_key_env: "OPENROUTER_API_KEY",
    auth: "Authorization: Bearer",
    quirks: {
      max_tokens_field: "max_tokens",
      developer_role: false,
      parallel_tool_calls: true,
      reasoning_effort: "reasoning.effort",
    },
    images: "URLs and data: URLs (vision models)",
    usage: "always sent (include_usage has no effect) in the last SSE message, with cost and cached_tokens",
    media: [],
  },
  deepseek: {
    title: "DeepSeek",
    kind: "openai-chat",
    base_url: "https://api.deepseek.com",
    api_key_env: "DEEPSEEK_API_KEY",
    auth: "Authorization: Bearer",
    quirks: {
      max_tokens_field: "max_tokens",
      developer_role: false,
      parallel_tool_calls: false,
      reasoning_effort: "drop",
    },
    images: "none (text only)",
    usage: "include_usage honoured; prompt_cache_hit_tokens / prompt_cache_miss_tokens for the cache",
    media: [],
  },
  gemini: {
    title: "Gemini (OpenAI-compatible endpoint)",
    kind: "openai-chat",
    base_url: "https://generativelanguage.googleapis.com/v1beta/openai",
    api_key_env: "GEMINI_API_KEY",
    auth: "Authorization: Bearer",
    quirks: {
      max_tokens_field: "max_tokens",
      developer_role: false,
      parallel_tool_calls: false,
      reasoning_effort: "reasoning_effort",
    },
    images: "data: URLs (base64)",
    usage: "prompt_tokens, completion_tokens, total_tokens; streamed on include_usage",
    media: ["embeddings"],
    embeddings: PLAIN_EMBEDDINGS,
  },
  ollama: {
    title: "Ollama",
    kind: "openai-chat",
    base_url: "http://localhost:11434/v1",
    auth: "none (optional Bearer)",
    quirks: {
      max_tokens_field: "max_tokens",
      developer_role: false,
      parallel_tool_calls: false,
      reasoning_effort: "reasoning_effort",
    },
    images: "data: URLs only; links are refused by Ollama",
    usage: "prompt/completion/total only; streamed in a chunk with empty choices on include_usage",
    media: ["embeddings"],
    embeddings: PLAIN_EMBEDDINGS,
  },
  vllm: {
    title: "vLLM",
    kind: "openai-chat",
    base_url: "http://localhost:8000/v1",
    auth: "none (optional Bearer)",
    quirks: {
      max_tokens_field: "either",
      developer_role: false,
      parallel_tool_calls: true,
      reasoning_effort: "reasoning_effort",
    },
    images: "URLs and data: URLs (multimodal models)",
    usage: "include_usage honoured; continuous_usage_stats puts cumulative usage on every chunk",
    media: ["embeddings", "transcriptions", "translations"],
    embeddings: { token_input: true, base64: true },
  },
  llamacpp: {
    title: "llama.cpp server",
    kind: "openai-chat",
    base_url: "http://localhost:8080/v1",
    auth: "none (optional Bearer)",
    quirks: {
      max_tokens_field: "either",
      developer_role: false,
      parallel_tool_calls: true,
      reasoning_effort: "drop",
    },
    images: "data: URLs with a multimodal model (--mmproj)",
    usage:
      "chunk with empty choices plus timings on include_usage; older builds put usage on the finish chunk",
    media: ["embeddings"],
    embeddings: PLAIN_EMBEDDINGS,
  },
  lmstudio: {
    title: "LM Studio",
    kind: "openai-chat",
    base_url: "http://localhost:1234/v1",
    auth: "none (optional Bearer)",
    quirks: {
      max_tokens_field: "max_tokens",
      developer_role: false,
      parallel_tool_calls: false,
      reasoning_effort: "drop",
    },
    images: "data: URLs (vision models)",
    usage: "prompt_tokens, completion_tokens, total_tokens",
    media: ["embeddings"],
    embeddings: PLAIN_EMBEDDINGS,
  },
  speaches: {
    title: "Speaches",
    kind: "openai-chat",
    base_url: "http://localhost:8000/v1",
    auth: "none (optional Bearer)",
    quirks: OPENAI_QUIRKS,
    images: "none (speech only)",
    usage: "none reported: transcriptions are billed from the duration the gateway reads",
    media: ["transcriptions", "translations", "speech"],
  },
  kokoro: {
    title: "Kokoro-FastAPI",
    kind: "openai-chat",
    base_url: "http://localhost:8880/v1",
    auth: "none (optional Bearer)",
    quirks: OPENAI_QUIRKS,
    images: "none (speech only)",
    usage: "none reported: speech is billed from the characters the gateway counts",
    media: ["speech"],
  },
} as const satisfies Record<string, Preset>;

export type PresetName = keyof typeof PRESETS;
export const PRESET_NAMES = Object.keys(PRESETS) as PresetName[];

function isPresetName(name: unknown): name is PresetName {
  return typeof name === "string" && Object.hasOwn(PRESETS, name);
}

/** The check run before a channel is parsed: an unknown preset names the known ones. */
export function unknownPreset(input: unknown): string | undefined {
  if (typeof input !== "object" || input === null || !("preset" in input)) return undefined;
  const name = (input as { preset: unknown }).preset;
  if (isPresetName(name)) return undefined;
  return `unknown preset ${JSON.stringify(name)}; known presets are ${PRESET_NAMES.join(", ")}`;
}

/**
 * A channel entry with its preset's defaults filled in where the entry says nothing: kind,
 * base_url and (when no credential variable is named) api_key_env. Anything else is untouched.
 */
export function withPreset(input: unknown): unknown {
  if (typeof input !== "object" || input === null) return input;
  const entry = input as Record<string, unknown>;
  if (!isPresetName(entry.preset)) return input;
  const preset: Preset = PRESETS[entry.preset];
  const named = entry.api_key_env !== undefined || entry.api_key_envs !== undefined;
  return {
    kind: preset.kind,
    base_url: preset.base_url,
    ...(preset.api_key_env !== undefined && !named ? { api_key_env: preset.api_key_env } : {}),
    ...entry,
  };
}

/** The quirks a channel runs with: its preset's (OpenAI's without one), overridden by its own. */
export function resolveQuirks(preset: PresetName | undefined, own: QuirksConfig | undefined): Quirks {
  const base = preset === undefined ? OPENAI_QUIRKS : PRESETS[preset].quirks;
  const merged: Quirks = { ...base };
  if (own === undefined) return merged;
  for (const key of Object.keys(own) as (keyof QuirksConfig)[]) {
    const value = own[key];
    if (value !== undefined) Object.assign(merged, { [key]: value });
  }
  return merged;
}
