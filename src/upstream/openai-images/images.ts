// Adapter for an OpenAI-style images API (channel kind "openai-images"): generations as JSON,
// edits as multipart (files handed to fetch as Blobs, streamed on), results and stream events
// (`image_generation.*` / `image_edit.*`) parsed by valibot into the gateway's ImageEvents.
import { createParser, type EventSourceMessage } from "eventsource-parser";
import * as v from "valibot";
import type { Secret } from "../../base/types.ts";
import { describeIssues } from "../../base/validation.ts";
import type { ChannelConfig } from "../../config/schema.ts";
import { GatewayError } from "../../wire/errors.ts";
import { UpstreamEventSchema, UpstreamResultSchema } from "../../wire/images-events.ts";
import { refusedWith } from "../attempt.ts";
import { joinUrl, postUpstream } from "../http.ts";
import type { ImageEvent, ImageJob, ImageUpstream, UploadedImage } from "../image-job.ts";

type HttpChannel = Exclude<ChannelConfig, { kind: "sim" }>;

/** The media type and file-name extension of each recognised format (the API refuses octet-stream). */
const FILE_TYPE = {
  png: { mime: "image/png", extension: "png" },
  jpeg: { mime: "image/jpeg", extension: "jpg" },
  webp: { mime: "image/webp", extension: "webp" },
} as const;

/**
 * The fields the official API reference lists for the endpoint (CreateImageRequest for
 * generations, CreateImageEditRequest for the multipart edit). `output_compression` only goes with
 * jpeg and webp, `partial_images` only with a stream, `input_fidelity` only on edits, and
 * `moderation` only on generations: the multipart edit form has no such field.
 */
function commonFields(job: ImageJob): Record<string, string | number | boolean> {
  const o = job.options;
  const fields: Record<string, string | number | boolean> = {
    model: job.upstreamModel,
    prompt: o.prompt,
    size: o.size,
    quality: o.quality,
    background: o.background,
    output_format: o.outputFormat,
    n: o.n,
    stream: o.stream,
  };
  if (o.outputFormat !== "png") fields.output_compression = o.outputCompression;
  if (job.kind === "generation") fields.moderation = o.moderation;
  if (o.stream) fields.partial_images = o.partialImages;
  if (o.user !== undefined) fields.user = o.user;
  if (job.kind === "edit" && o.inputFidelity !== undefined) fields.input_fidelity = o.inputFidelity;
  return fields;
}

/** A file part typed by its sniffed format, named to match (`image-0.jpg`, `mask.png`). */
function filePart(image: UploadedImage, stem: string): [Blob, string] {
  const type = FILE_TYPE[image.info.format];
  return [new Blob([image.bytes], { type: type.mime }), `${stem}.${type.extension}`];
}

function editForm(job: ImageJob): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries({ ...job.extra, ...commonFields(job) })) {
    if (typeof value === "string" || typeof value === "number" || typeof value === "boolean")
      form.append(name, String(value));
  }
  const field = job.images.length > 1 ? "image[]" : "image";
  job.images.forEach((image, i) => {
    form.append(field, ...filePart(image, `image-${i}`));
  });
  if (job.mask) form.append("mask", ...filePart(job.mask, "mask"));
  return form;
}

async function upstreamError(response: Response, channel: string): Promise<GatewayError> {
  const text = (await response.text().catch(() => "")).slice(0, 2000);
  let message = text;
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown } };
    if (typeof parsed.error?.message === "string") message = parsed.error.message;
  } catch {
    // not JSON: keep the text as it came
  }
  const detail = `upstream channel "${channel}" answered ${response.status}: ${message || "(no body)"}`;
  if (response.status === 400 || response.status === 422) return new GatewayError("invalid_request", detail);
  if (response.status === 413) return new GatewayError("too_large", detail);
  if (response.status === 429) return new GatewayError("rate_limited", detail, { retryAfterSeconds: 1 });
  return new GatewayError("upstream_failed", detail);
}

/** Upstream JSON text parsed; text that is not JSON is the upstream's failure (502), never a 500. */
function upstreamJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    const start = text.slice(0, 80);
    throw new GatewayError("upstream_failed", `upstream ${what} is not JSON: ${JSON.stringify(start)}`);
  }
}

async function* fromResult(response: Response): AsyncGenerator<ImageEvent> {
  const result = v.safeParse(UpstreamResultSchema, upstreamJson(await response.text(), "result"));
  if (!result.success) {
    throw new GatewayError("upstream_failed", `upstream result malformed: ${describeIssues(result.issues)}`);
  }
  const { data, usage, size, quality, background } = result.output;
  for (const [i, item] of data.entries()) {
    const first = i === 0;
    yield { type: "image", b64: item.b64_json, usage: first ? usage : undefined, size, quality, background };
  }
}

/** Upstream SSE messages, parsed by eventsource-parser as the bytes arrive. */
async function* sseMessages(body: ReadableStream<Uint8Array>): AsyncGenerator<EventSourceMessage> {
  const queue: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (message) => queue.push(message) });
  const decoder = new TextDecoder();
  for await (const chunk of body) {
    parser.feed(decoder.decode(chunk, { stream: true }));
    yield* queue.splice(0);
  }
  parser.feed(decoder.decode());
  yield* queue.splice(0);
}

async function* fromStream(body: ReadableStream<Uint8Array>): AsyncGenerator<ImageEvent> {
  for await (const message of sseMessages(body)) {
    if (message.data === "[DONE]") return;
    const parsed = v.safeParse(UpstreamEventSchema, upstreamJson(message.data, "stream event"));
    if (!parsed.success) continue; // an event type we do not know: tolerated (the API adds event types)
    const event = parsed.output;
    switch (event.type) {
      case "error":
        throw new GatewayError(
          "upstream_failed",
          `upstream stream failed: ${event.error?.message ?? "unknown error"}`,
        );
      case "image_generation.partial_image":
      case "image_edit.partial_image":
        yield {
          type: "partial",
          b64: event.b64_json,
          partialIndex: event.partial_image_index,
          size: event.size,
          quality: event.quality,
          background: event.background,
        };
        break;
      case "image_generation.completed":
      case "image_edit.completed":
        yield {
          type: "image",
          b64: event.b64_json,
          usage: event.usage,
          size: event.size,
          quality: event.quality,
          background: event.background,
        };
        break;
    }
  }
}

export function openaiImageUpstream(channel: HttpChannel, credential: Secret | undefined): ImageUpstream {
  return {
    async *run(job: ImageJob, signal: AbortSignal): AsyncGenerator<ImageEvent> {
      const headers: Record<string, string> = {
        accept: job.options.stream ? "text/event-stream" : "application/json",
      };
      if (credential) headers.authorization = `Bearer ${credential.expose()}`;
      const path = job.kind === "generation" ? "/images/generations" : "/images/edits";
      let body: string | FormData;
      if (job.kind === "generation") {
        headers["content-type"] = "application/json";
        body = JSON.stringify({ ...job.extra, ...commonFields(job) });
      } else body = editForm(job);
      let response: Response;
      try {
        response = await postUpstream({
          channel: channel.name,
          url: joinUrl(channel.base_url, path),
          headers,
          body,
          signal,
          connectMs: channel.timeouts.connect_ms,
        });
      } catch (thrown) {
        if (signal.aborted) return;
        throw thrown;
      }
      if (!response.ok) throw refusedWith(await upstreamError(response, channel.name), response.status);
      const streamed = (response.headers.get("content-type") ?? "").includes("text/event-stream");
      if (streamed && response.body) yield* fromStream(response.body);
      else yield* fromResult(response);
    },
  };
}
