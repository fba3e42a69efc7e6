// The in-process simulator as an image upstream (channel kind "sim"): no HTTP, same images.
import { SimInputError } from "../../sim/images/engine.ts";
import { simImagesOffThread } from "../../sim/images/thread.ts";
import { GatewayError } from "../../wire/errors.ts";
import type { ImageEvent, ImageJob, ImageUpstream } from "../image-job.ts";

export function simImageUpstream(seed: number): ImageUpstream {
  return {
    async *run(job: ImageJob, signal: AbortSignal): AsyncGenerator<ImageEvent> {
      const events = simImagesOffThread({
        seed,
        options: job.options,
        images: job.images.map((i) => i.bytes),
        mask: job.mask?.bytes,
      });
      try {
        for await (const event of events) {
          if (signal.aborted) return;
          const meta = { size: event.size, quality: event.quality, background: event.background };
          if (event.type === "partial") {
            yield { type: "partial", b64: event.b64, partialIndex: event.partialIndex, ...meta };
          } else yield { type: "image", b64: event.b64, usage: event.usage, ...meta };
        }
      } catch (thrown) {
        if (thrown instanceof SimInputError) throw new GatewayError("invalid_request", thrown.message);
        throw thrown;
      }
    },
  };
}
