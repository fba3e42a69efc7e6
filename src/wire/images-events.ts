// Image results and stream events on the wire. Out to clients: the result object
// `{created, data: [{b64_json}], usage}` and SSE events `image.partial_image` / `image.completed`
// (SPEC.md). In from an OpenAI-style upstream: its `ImagesResponse` and its stream events
// `image_generation.*` / `image_edit.*` (WIRE.md §5), parsed by valibot.
import * as v from "valibot";

export const UsageSchema = v.looseObject({
  input_tokens: v.number(),
  output_tokens: v.number(),
  total_tokens: v.number(),
  input_tokens_details: v.optional(
    v.looseObject({ text_tokens: v.optional(v.number(), 0), image_tokens: v.optional(v.number(), 0) }),
  ),
});
export type ImageUsage = v.InferOutput<typeof UsageSchema>;

/** The upstream's non-stream answer. */
export const UpstreamResultSchema = v.looseObject({
  created: v.optional(v.number()),
  data: v.array(v.looseObject({ b64_json: v.string() })),
  size: v.optional(v.string()),
  quality: v.optional(v.string()),
  usage: v.optional(UsageSchema),
});

/** One upstream stream event; the gateway keeps the kind (partial or completed) and drops the prefix. */
export const UpstreamEventSchema = v.variant("type", [
  v.looseObject({
    type: v.picklist(["image_generation.partial_image", "image_edit.partial_image"]),
    b64_json: v.string(),
    partial_image_index: v.optional(v.number()),
    created_at: v.optional(v.number()),
  }),
  v.looseObject({
    type: v.picklist(["image_generation.completed", "image_edit.completed"]),
    b64_json: v.string(),
    created_at: v.optional(v.number()),
    size: v.optional(v.string()),
    quality: v.optional(v.string()),
    usage: v.optional(UsageSchema),
  }),
  v.looseObject({
    type: v.literal("error"),
    error: v.optional(
      v.looseObject({ message: v.optional(v.string()), code: v.optional(v.nullable(v.string())) }),
    ),
  }),
]);
export type UpstreamEvent = v.InferOutput<typeof UpstreamEventSchema>;

/** The real API's event name for a job kind and stage. */
export function upstreamEventName(kind: "generation" | "edit", stage: "partial_image" | "completed"): string {
  return `${kind === "generation" ? "image_generation" : "image_edit"}.${stage}`;
}

/** The result object clients get (and the `image.completed` event carries). */
export interface ImageResult {
  created: number;
  data: { b64_json: string }[];
  usage: ImageUsage;
}

export const EMPTY_USAGE: ImageUsage = {
  input_tokens: 0,
  output_tokens: 0,
  total_tokens: 0,
  input_tokens_details: { text_tokens: 0, image_tokens: 0 },
};

/** Adds token usage of several images. */
export function addUsage(a: ImageUsage, b: ImageUsage): ImageUsage {
  return {
    input_tokens: a.input_tokens + b.input_tokens,
    output_tokens: a.output_tokens + b.output_tokens,
    total_tokens: a.total_tokens + b.total_tokens,
    input_tokens_details: {
      text_tokens: (a.input_tokens_details?.text_tokens ?? 0) + (b.input_tokens_details?.text_tokens ?? 0),
      image_tokens: (a.input_tokens_details?.image_tokens ?? 0) + (b.input_tokens_details?.image_tokens ?? 0),
    },
  };
}

const encoder = new TextEncoder();

/** One SSE frame: `event:` line and a `data:` line whose `type` equals it. */
export function sseFrame(type: string, fields: Record<string, unknown>): Uint8Array {
  return encoder.encode(`event: ${type}\ndata: ${JSON.stringify({ type, ...fields })}\n\n`);
}

export function partialImageFrame(index: number, b64: string, createdAt: number): Uint8Array {
  return sseFrame("image.partial_image", { index, b64_json: b64, created_at: createdAt });
}

export function completedFrame(result: ImageResult): Uint8Array {
  return sseFrame("image.completed", { created_at: result.created, data: result.data, usage: result.usage });
}

export function errorFrame(error: {
  message: string;
  type: string;
  param: string | null;
  code: string | null;
}) {
  return sseFrame("error", { error });
}
