// Image upstreams: the dispatch from a channel to its adapter (in-process simulator or an
// OpenAI-style images API); the job and its events are in image-job.ts.

import type { Secret } from "../base/types.ts";
import type { Gateway } from "../gateway.ts";
import type { Channel } from "./channels.ts";
import type { ImageUpstream } from "./image-job.ts";
import { openaiImageUpstream } from "./openai-images/images.ts";
import { simImageUpstream } from "./sim/images.ts";

/** Whether a channel can make images (the simulator or an OpenAI-style images API). */
export function servesImages(channel: Channel): boolean {
  const kind = channel.config.kind;
  switch (kind) {
    case "sim":
    case "openai-images":
      return true;
    case "openai-responses":
    case "openai-chat":
    case "anthropic":
      return false;
    default: {
      const unknown: never = kind;
      throw new Error(`unhandled channel kind ${String(unknown)}`);
    }
  }
}

/** The adapter for a channel; a text-only channel kind cannot serve images. */
export function imageUpstream(channel: Channel, gateway: Gateway, credential?: Secret): ImageUpstream {
  const config = channel.config;
  switch (config.kind) {
    case "sim":
      return simImageUpstream(gateway.config.sim.seed);
    case "openai-images":
      return openaiImageUpstream(config, credential);
    case "openai-responses":
    case "openai-chat":
    case "anthropic":
      // Filtered out before (`servesImages`): reaching here is the gateway's bug.
      throw new Error(`channel ${config.name} (kind ${config.kind}) does not serve images`);
    default: {
      const unknown: never = config;
      throw new Error(`unhandled channel kind ${JSON.stringify(unknown)}`);
    }
  }
}
