// Which channels serve the OpenAI-style media endpoints (embeddings, speech to text, speech) and
// in which dialect. The
// in-process simulator serves them all; a channel of an OpenAI-style kind (Responses, Chat
// Completions or images: one base URL of an OpenAI-compatible server) serves those its preset
// lists, or all of them without a preset; an Anthropic channel serves none. The switch is
// exhaustive over the channel kinds, so a new kind must decide here.
import {
  type EmbeddingsDialect,
  type MediaEndpoint,
  OPENAI_EMBEDDINGS,
  PRESETS,
  type Preset,
} from "../config/presets.ts";
import type { Channel } from "./channels.ts";

/** How a channel is called for a media endpoint: in process, over HTTP, or not at all. */
export type MediaTransport = "sim" | "http" | undefined;

/** The transport of `channel` for `endpoint`, undefined when it does not serve it. */
export function mediaTransport(channel: Channel, endpoint: MediaEndpoint): MediaTransport {
  const config = channel.config;
  switch (config.kind) {
    case "sim":
      return "sim";
    case "openai-responses":
    case "openai-chat":
    case "openai-images": {
      if (config.preset === undefined) return "http";
      const preset: Preset = PRESETS[config.preset];
      return preset.media.includes(endpoint) ? "http" : undefined;
    }
    case "anthropic":
      return undefined;
    default: {
      const never: never = config;
      throw new Error(`unknown channel kind ${JSON.stringify(never)}`);
    }
  }
}

/** The embeddings dialect of a channel (OpenAI's without a preset, or for the simulator). */
export function embeddingsDialect(channel: Channel): EmbeddingsDialect {
  const config = channel.config;
  if (config.kind === "sim" || config.preset === undefined) return OPENAI_EMBEDDINGS;
  const preset: Preset = PRESETS[config.preset];
  return preset.embeddings ?? OPENAI_EMBEDDINGS;
}

/** Whether a channel streams speech as SSE (the simulator and OpenAI do; a preset says so). */
export function speechSse(channel: Channel): boolean {
  const config = channel.config;
  if (config.kind === "sim" || config.preset === undefined) return true;
  const preset: Preset = PRESETS[config.preset];
  return preset.speech_sse === true;
}
