// The simulator's image model: turns an image request into progress images and final images,
// encoded in the requested format, plus usage in the real API's token shape. Used in-process
// by the "sim" channel and over HTTP by the simulator server.

import type { ImageOptions } from "../../wire/images.ts";
import { parseSize } from "../../wire/images.ts";
import type { ImageUsage } from "../../wire/images-events.ts";
import { dimensionProblem, sniffImage } from "../../wire/images-sniff.ts";
import { hashString } from "../random.ts";
import { decodeImage, encodeImage, type Raster } from "./codecs.ts";
import { inpaint, paint, recreate, resample, stage } from "./synth.ts";

export interface SimImageRequest {
  seed: number;
  options: ImageOptions;
  /** Reference images of an edit (the first one is edited); empty for a generation. */
  images: readonly Uint8Array[];
  mask: Uint8Array | undefined;
}

/** Token usage in the shape of the real API's `ImageGenUsage`. */
export type SimUsage = ImageUsage;

/** The output's resolved description, carried by every event (as the real API's events do). */
interface SimEventMeta {
  size: string;
  quality: SimImageMeta["quality"];
  background: SimImageMeta["background"];
}

export type SimImageEvent =
  | ({ type: "partial"; imageIndex: number; partialIndex: number; b64: string } & SimEventMeta)
  | ({ type: "image"; imageIndex: number; b64: string; usage: SimUsage } & SimEventMeta);

/** A request the simulator refuses, as the real API would with 400. */
export class SimInputError extends Error {}

/** What the output looks like once `auto` values are resolved. */
export interface SimImageMeta {
  width: number;
  height: number;
  size: string;
  quality: "low" | "medium" | "high";
  background: "transparent" | "opaque";
}

const OUTPUT_TOKENS = { low: 272, medium: 1056, high: 4160 } as const;

export function resolveMeta(options: ImageOptions, reference: Raster | undefined): SimImageMeta {
  const parsed = parseSize(options.size);
  const width = parsed?.width ?? reference?.width ?? 1024;
  const height = parsed?.height ?? reference?.height ?? 1024;
  return {
    width,
    height,
    size: `${width}x${height}`,
    quality: options.quality === "auto" ? "medium" : options.quality,
    background: options.background === "transparent" ? "transparent" : "opaque",
  };
}

/**
 * The pixels one request may have decoded, its image and mask together: two 2048x2048 images. A
 * request holds several rasters of its size at once (the decoded reference, its resample, the
 * painting, the result, the codec's buffers: ~8 bytes a pixel each), so with the image thread
 * running one request at a time (thread.ts) this keeps the simulator's memory for an edit near
 * 300 MB; a 4096x4096 upload (the gateway's own limit, MAX_PIXELS) took ~700 MB.
 */
export const SIM_DECODE_PIXELS = 2 * 2048 * 2048;

async function decodeChecked(bytes: Uint8Array, field: string, spent: number): Promise<Raster> {
  const info = sniffImage(bytes);
  if (!info) throw new SimInputError(`${field}: not a PNG, JPEG or WebP image`);
  const problem = dimensionProblem(info);
  if (problem) throw new SimInputError(`${field}: ${problem}`);
  const pixels = info.width * info.height;
  if (spent + pixels > SIM_DECODE_PIXELS) {
    throw new SimInputError(
      `${field}: its ${info.width}x${info.height} pixels bring the request's images to ${spent + pixels} pixels, over the simulator's budget of ${SIM_DECODE_PIXELS} (two 2048x2048 images: the image and its mask). Send smaller images.`,
    );
  }
  try {
    return await decodeImage(bytes);
  } catch (thrown) {
    // A file whose structure is whole can still hold data the decoder rejects: the client's fault.
    const reason = thrown instanceof Error ? thrown.message : String(thrown);
    throw new SimInputError(`${field}: the ${info.format.toUpperCase()} file cannot be decoded (${reason})`);
  }
}

function usageFor(options: ImageOptions, meta: SimImageMeta, inputImages: number): SimUsage {
  const area = (meta.width * meta.height) / (1024 * 1024);
  const text = Math.ceil(options.prompt.length / 4);
  const image = inputImages * (options.inputFidelity === "high" ? 4096 : 1024);
  const output = Math.ceil(OUTPUT_TOKENS[meta.quality] * area) + 100 * options.partialImages;
  return {
    input_tokens: text + image,
    output_tokens: output,
    total_tokens: text + image + output,
    input_tokens_details: { text_tokens: text, image_tokens: image },
  };
}

/** Runs a request: per image, `partialImages` progress images then the final one. */
export async function* simImages(request: SimImageRequest): AsyncGenerator<SimImageEvent> {
  const { options } = request;
  const first = request.images[0];
  const reference = first === undefined ? undefined : await decodeChecked(first, "image", 0);
  const spent = reference === undefined ? 0 : reference.width * reference.height;
  const mask = request.mask === undefined ? undefined : await decodeChecked(request.mask, "mask", spent);
  if (reference && mask && (mask.width !== reference.width || mask.height !== reference.height)) {
    throw new SimInputError(
      `mask is ${mask.width}x${mask.height} but image is ${reference.width}x${reference.height}; they must match`,
    );
  }
  const meta = resolveMeta(options, reference);
  const encode = (r: Raster) => encodeImage(r, options.outputFormat, options.outputCompression);
  const described = { size: meta.size, quality: meta.quality, background: meta.background };
  for (let index = 0; index < options.n; index++) {
    const seed = hashString(`${index}`, request.seed);
    const painted = paint(seed, options.prompt, meta.width, meta.height, meta.background === "transparent");
    const final = compose(painted, reference, mask, options, meta);
    for (let p = 0; p < options.partialImages; p++) {
      const b64 = Buffer.from(await encode(stage(final, p))).toString("base64");
      yield { type: "partial", imageIndex: index, partialIndex: p, b64, ...described };
    }
    const b64 = Buffer.from(await encode(final)).toString("base64");
    const usage = usageFor(options, meta, request.images.length);
    yield { type: "image", imageIndex: index, b64, usage, ...described };
  }
}

function compose(
  painted: Raster,
  reference: Raster | undefined,
  mask: Raster | undefined,
  options: ImageOptions,
  meta: SimImageMeta,
): Raster {
  if (!reference) return painted;
  const base = resample(reference, meta.width, meta.height);
  if (mask) return inpaint(base, resample(mask, meta.width, meta.height), painted);
  return recreate(base, painted, options.inputFidelity ?? "low");
}
