// What an images request becomes for an upstream: the job (model, options, uploads), the events
// an upstream yields for it, and the adapter shape every image upstream kind implements.
import type { ImageOptions } from "../wire/images.ts";
import type { ImageUsage } from "../wire/images-events.ts";
import type { ImageInfo } from "../wire/images-sniff.ts";

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
