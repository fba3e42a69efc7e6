// Image upstreams: the job an images request becomes, the events an upstream yields for it, and
// the dispatch from a channel to its adapter (in-process simulator or an OpenAI-style images API).
import type { Gateway } from "../gateway.ts";
import { GatewayError } from "../wire/errors.ts";
import type { ImageOptions } from "../wire/images.ts";
import type { ImageUsage } from "../wire/images-events.ts";
import type { ImageInfo } from "../wire/images-sniff.ts";
import type { Channel } from "./channels.ts";
import { openaiImageUpstream } from "./images-openai.ts";
import { simImageUpstream } from "./images-sim.ts";

/** An uploaded file, recognised by its bytes. */
export interface UploadedImage {
  bytes: Uint8Array;
  info: ImageInfo;
}

export interface ImageJob {
  kind: "generation" | "edit";
  /** The model id the upstream knows (after the channel's model_map). */
  upstreamModel: string;
  options: ImageOptions;
  /** Reference images of an edit, in upload order; empty for a generation. */
  images: readonly UploadedImage[];
  mask: UploadedImage | undefined;
  /** Fields the client sent that the gateway does not know, passed on unchanged. */
  extra: Readonly<Record<string, unknown>>;
}

/** What the upstream reports about its output (the real API resolves `auto` in these). */
export interface ImageMeta {
  size?: string | undefined;
  quality?: string | undefined;
  background?: string | undefined;
}

/** What an upstream yields: progress images, then one `image` per requested image. */
export type ImageEvent =
  | ({ type: "partial"; b64: string; partialIndex?: number | undefined } & ImageMeta)
  | ({ type: "image"; b64: string; usage?: ImageUsage | undefined } & ImageMeta);

export interface ImageUpstream {
  run(job: ImageJob, signal: AbortSignal): AsyncGenerator<ImageEvent>;
}

/** Whether a channel can make images (the simulator or an OpenAI-style images API). */
export function servesImages(channel: Channel): boolean {
  return channel.config.kind === "sim" || channel.config.kind === "openai-images";
}

/** The adapter for a channel; a text-only channel kind cannot serve images. */
export function imageUpstream(channel: Channel, gateway: Gateway, credential?: string): ImageUpstream {
  const config = channel.config;
  switch (config.kind) {
    case "sim":
      return simImageUpstream(gateway.config.sim.seed);
    case "openai-images":
      return openaiImageUpstream(config, credential);
    case "openai-responses":
    case "openai-chat":
    case "anthropic":
      throw new GatewayError(
        "no_channel",
        `channel "${config.name}" (kind ${config.kind}) cannot serve images; configure an openai-images or sim channel for this model`,
      );
    default: {
      const unknown: never = config;
      throw new Error(`unhandled channel kind ${JSON.stringify(unknown)}`);
    }
  }
}
