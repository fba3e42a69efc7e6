// What an image request produced so far — progress images, final images, upstream usage — and the
// settlement it reports to the billing layer (billing facts: generations, quality, size, input
// fidelity, output format).
import { type Ending, NO_USAGE } from "../billing/metered.ts";
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
  #partials = 0;
  #images: { b64_json: string }[] = [];
  #usage: ImageUsage = EMPTY_USAGE;
  #reported = false;
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
    if (event.type === "partial") {
      this.#partials++;
      return;
    }
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

  /** The settlement of what was produced so far, the client's answer having `status`. */
  ending(status: number): Ending {
    const generations = this.#partials + this.#images.length;
    const o = this.#options;
    return {
      status,
      usage: { ...NO_USAGE, generations },
      source: this.#reported ? "reported" : generations > 0 ? "estimated" : "none",
      ttfbMs: this.#ttfbMs,
      detail: {
        quality: this.#quality ?? o.quality,
        size: this.#size ?? o.size,
        input_fidelity: o.inputFidelity ?? null,
        output_format: o.outputFormat,
        partial_images: this.#partials,
        images: this.#images.length,
        input_tokens: this.#usage.input_tokens,
        output_tokens: this.#usage.output_tokens,
      },
    };
  }
}
