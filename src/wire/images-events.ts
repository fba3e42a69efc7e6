// Image results and stream events on the wire. Out to clients: the result object
// `{created, data: [{b64_json}], usage}` and SSE events named `image.partial_image` /
// `image.completed` (the gateway's own, docs/api.md) whose data also carries every field of the official API's
// `image_generation.*` / `image_edit.*` events, so the openai SDKs read them too. In from an
// OpenAI-style upstream: its `ImagesResponse` and those official events, parsed by valibot.
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

/** The settings an upstream reports back with an image (its answer and its stream events). */
const ImageSettingsFields = {
  size: v.optional(v.string()),
  quality: v.optional(v.string()),
  background: v.optional(v.string()),
};

/** The upstream's non-stream answer. */
export const UpstreamResultSchema = v.looseObject({
  created: v.optional(v.number()),
  data: v.array(v.looseObject({ b64_json: v.string() })),
  ...ImageSettingsFields,
  usage: v.optional(UsageSchema),
});

/** One upstream stream event; the gateway keeps the kind (partial or completed) and drops the prefix. */
export const UpstreamEventSchema = v.variant("type", [
  v.looseObject({
    type: v.picklist(["image_generation.partial_image", "image_edit.partial_image"]),
    b64_json: v.string(),
    partial_image_index: v.optional(v.number()),
    created_at: v.optional(v.number()),
    ...ImageSettingsFields,
  }),
  v.looseObject({
    type: v.picklist(["image_generation.completed", "image_edit.completed"]),
    b64_json: v.string(),
    created_at: v.optional(v.number()),
    ...ImageSettingsFields,
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
  return sseEvent(type, { type, ...fields });
}

/** One SSE frame with an event name and any data object. */
function sseEvent(name: string, data: Record<string, unknown>): Uint8Array {
  return encoder.encode(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
}

/** What the official stream events say about the output, on every event. */
export interface StreamMeta {
  kind: "generation" | "edit";
  size: string;
  quality: string;
  background: string;
  outputFormat: string;
}

function described(meta: StreamMeta, b64: string, createdAt: number): Record<string, unknown> {
  return {
    b64_json: b64,
    created_at: createdAt,
    size: meta.size,
    quality: meta.quality,
    background: meta.background,
    output_format: meta.outputFormat,
  };
}

/*
 * One frame per event serves both readers. The SSE `event:` line carries the gateway's name
 * (`image.partial_image`, `image.completed`); the JSON carries the gateway's fields (`index`,
 * `b64_json`, `created_at`; `data`, `usage`) and the official event's (`type`
 * `image_generation.*` / `image_edit.*`, top-level `b64_json`, `size`, `quality`, `background`,
 * `output_format`, `partial_image_index`). The openai SDKs never look at the `event:` line of
 * these streams: they yield each `data` object as it is and callers switch on its `type`, so
 * `type` is the official name. A progress image travels once (both shapes name it `b64_json`).
 * The final image is the one place the two shapes cannot share bytes: the gateway's shape has it in
 * `data[].b64_json`, the SDK at the top level. Measured on the wire with the simulator's images,
 * partial_images 2, one image: 1024x1024 low PNG — gateway-shape-only stream 29,233 bytes, this merged
 * stream 41,749 (+43%: the final image twice), gateway events plus separate official events 58,786
 * (+101%: every image twice); 1024x1536 high JPEG — 202,049 / 283,159 (+40%) / 404,424 (+100%). Choosing the shape by the client (for example the SDK's
 * `x-stainless-*` headers) would save the copy but give one request two wire formats; the
 * merged frame is the smallest stream that every client reads in full.
 */

export function partialImageFrame(
  meta: StreamMeta,
  index: number,
  partialIndex: number,
  b64: string,
  createdAt: number,
): Uint8Array {
  return sseEvent("image.partial_image", {
    type: upstreamEventName(meta.kind, "partial_image"),
    index,
    partial_image_index: partialIndex,
    ...described(meta, b64, createdAt),
  });
}

/** The final event: the gateway's `data` and `usage`, and the official fields with the first image. */
export function completedFrame(meta: StreamMeta, result: ImageResult): Uint8Array {
  return sseEvent("image.completed", {
    type: upstreamEventName(meta.kind, "completed"),
    ...described(meta, result.data[0]?.b64_json ?? "", result.created),
    usage: result.usage,
    data: result.data,
  });
}

export function errorFrame(error: {
  message: string;
  type: string;
  param: string | null;
  code: string | null;
}) {
  return sseFrame("error", { error });
}
