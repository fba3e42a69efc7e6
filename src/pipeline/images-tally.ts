// What an image request produced so far — progress images, final images, upstream usage — what of
// it the client was sent, and the settlement it reports to the billing layer: the generations sent
// (each progress image as it went out, the final images once the result or `image.completed` went
// out; an answer that failed before them bills only the progress images already sent), and the
// billing facts (quality, size, input fidelity, output format).
import { type Ending, NO_USAGE } from "../billing/layer.ts";
import type { ImageEvent, ImageMeta } from "../upstream/image-job.ts";
import { GatewayError } from "../wire/errors.ts";
import type { ImageOptions } from "../wire/images.ts";
import {
  addUsage,
  EMPTY_USAGE,
  type ImageResult,
  type ImageUsage,
  type StreamMeta,
} from "../wire/images-events.ts";

export class ImageTally {
  readonly #options: ImageOptions;
  readonly #startedAt: number;
  #images: { b64_json: string }[] = [];
  #usage: ImageUsage = EMPTY_USAGE;
  #reported = false;
  /** Progress images the client was sent. */
  #partialsSent = 0;
  /** Final images the client was sent (all of them, with the result). */
  #imagesSent = 0;
  #size: string | undefined;
  #quality: string | undefined;
  #background: string | undefined;
  #ttfbMs: number | undefined;

  constructor(options: ImageOptions, startedAt: number) {
    this.#options = options;
    this.#startedAt = startedAt;
  }

  markFirstByte(): void {
    this.#ttfbMs ??= Math.round(performance.now() - this.#startedAt);
  }

  record(event: ImageEvent): void {
    // A progress image is billed when it is sent (partialSent), as it is never kept.
    if (event.type === "partial") return;
    this.#images.push({ b64_json: event.b64 });
    if (event.usage) {
      this.#usage = addUsage(this.#usage, event.usage);
      this.#reported = true;
    }
    this.#size ??= event.size;
    this.#quality ??= event.quality;
    this.#background ??= event.background;
  }

  /** How stream events describe the output: what the upstream reported, else what was asked. */
  describe(kind: StreamMeta["kind"], event: ImageMeta = {}): StreamMeta {
    const o = this.#options;
    return {
      kind,
      size: event.size ?? this.#size ?? o.size,
      quality: event.quality ?? this.#quality ?? o.quality,
      background: event.background ?? this.#background ?? o.background,
      outputFormat: o.outputFormat,
    };
  }

  /** A progress image went out to the client. */
  partialSent(): void {
    this.#partialsSent++;
  }

  /** The final images went out to the client (the JSON result, or `image.completed`). */
  imagesSent(): void {
    this.#imagesSent = this.#images.length;
  }

  /** How many final images have arrived. */
  imagesSoFar(): number {
    return this.#images.length;
  }

  /** The result so far; an upstream that produced no image at all is a failure. */
  result(): ImageResult {
    if (this.#images.length === 0) {
      throw new GatewayError("upstream_failed", "the upstream finished without returning an image; retry");
    }
    return { created: Math.floor(Date.now() / 1000), data: this.#images, usage: this.#usage };
  }

  /**
   * The settlement of what the client was sent so far, its answer having `status`: the upstream's
   * usage when the final images went out (`reported`, else `estimated`), the progress images alone
   * when they did not (`counted`).
   */
  ending(status: number): Ending {
    const sent = this.#imagesSent > 0;
    const generations = this.#partialsSent + this.#imagesSent;
    const o = this.#options;
    const source = sent ? (this.#reported ? "reported" : "estimated") : generations > 0 ? "counted" : "none";
    const usage = sent ? this.#usage : EMPTY_USAGE;
    return {
      status,
      usage: { ...NO_USAGE, generations },
      source,
      ttfbMs: this.#ttfbMs,
      detail: {
        quality: this.#quality ?? o.quality,
        size: this.#size ?? o.size,
        input_fidelity: o.inputFidelity ?? null,
        output_format: o.outputFormat,
        partial_images: this.#partialsSent,
        images: this.#imagesSent,
        input_tokens: usage.input_tokens,
        output_tokens: usage.output_tokens,
      },
    };
  }
}
