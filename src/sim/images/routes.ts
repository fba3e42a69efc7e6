// The simulator's Images API over HTTP, shaped like the real one: JSON results with
// `b64_json`, and streams of `image_generation.*` / `image_edit.*` events, so the gateway's
// OpenAI-style images adapter is exercised over the wire.

import { images } from "../../endpoints/images/index.ts";
import { parseOrThrow } from "../../wire/decode.ts";
import { GatewayError } from "../../wire/errors.ts";
import {
  coerceFormFields,
  EditFieldsSchema,
  GenerationBodySchema,
  type ImageOptions,
  toImageOptions,
} from "../../wire/images.ts";
import {
  addUsage,
  EMPTY_USAGE,
  type ImageUsage,
  sseFrame,
  upstreamEventName,
} from "../../wire/images-events.ts";
import type { SimRoute, SimServerOptions } from "../routes.ts";
import { resolveMeta, type SimImageEvent, type SimImageRequest, SimInputError } from "./engine.ts";
import { simImagesOffThread } from "./thread.ts";

type Kind = "generation" | "edit";

function errorJson(status: number, message: string, param: string | null = null): Response {
  return Response.json({ error: { message, type: "invalid_request_error", param, code: null } }, { status });
}

async function generations(request: Request, options: SimServerOptions): Promise<Response> {
  let body: unknown;
  try {
    body = await request.json();
  } catch {
    return errorJson(400, "body is not valid JSON");
  }
  return guarded(() => {
    const opts = toImageOptions(parseOrThrow(GenerationBodySchema, body));
    return answer("generation", { seed: options.seed, options: opts, images: [], mask: undefined });
  });
}

async function edits(request: Request, options: SimServerOptions): Promise<Response> {
  const form = await request.formData();
  const fields: Record<string, string> = {};
  const images: Uint8Array[] = [];
  let mask: Uint8Array | undefined;
  for (const [name, value] of form.entries()) {
    if (typeof value === "string") fields[name] = value;
    else if (name === "image" || name === "image[]") images.push(new Uint8Array(await value.arrayBuffer()));
    else if (name === "mask") mask = new Uint8Array(await value.arrayBuffer());
  }
  if (images.length === 0) return errorJson(400, "image is required", "image");
  return guarded(() => {
    const opts = toImageOptions(parseOrThrow(EditFieldsSchema, coerceFormFields(fields)));
    return answer("edit", { seed: options.seed, options: opts, images, mask });
  });
}

async function guarded(run: () => Promise<Response>): Promise<Response> {
  try {
    return await run();
  } catch (thrown) {
    if (thrown instanceof GatewayError) return errorJson(thrown.status, thrown.message, thrown.param);
    if (thrown instanceof SimInputError) return errorJson(400, thrown.message);
    throw thrown;
  }
}

async function answer(kind: Kind, request: SimImageRequest): Promise<Response> {
  const events = simImagesOffThread(request);
  // Pull the first event before answering so input errors become a 400, not a broken stream.
  const first = await events.next();
  if (request.options.stream) return streamAnswer(kind, request.options, first, events);
  const data: { b64_json: string }[] = [];
  let usage: ImageUsage = EMPTY_USAGE;
  let size = "auto";
  for (let step = first; !step.done; step = await events.next()) {
    if (step.value.type === "image") {
      data.push({ b64_json: step.value.b64 });
      usage = addUsage(usage, step.value.usage);
      size = step.value.size;
    }
  }
  const meta = resolveMeta(request.options, undefined);
  return Response.json({
    created: Math.floor(Date.now() / 1000),
    data,
    background: meta.background,
    output_format: request.options.outputFormat,
    quality: meta.quality,
    size,
    usage,
  });
}

function streamAnswer(
  kind: Kind,
  options: ImageOptions,
  first: IteratorResult<SimImageEvent>,
  events: AsyncGenerator<SimImageEvent>,
): Response {
  let step = first;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (step.done) {
        controller.close();
        return;
      }
      const event = step.value;
      const described = {
        b64_json: event.b64,
        created_at: Math.floor(Date.now() / 1000),
        size: event.size,
        quality: event.quality,
        background: event.background,
        output_format: options.outputFormat,
      };
      if (event.type === "partial") {
        const name = upstreamEventName(kind, "partial_image");
        controller.enqueue(sseFrame(name, { ...described, partial_image_index: event.partialIndex }));
      } else {
        const name = upstreamEventName(kind, "completed");
        controller.enqueue(sseFrame(name, { ...described, usage: event.usage }));
      }
      step = await events.next();
    },
    async cancel() {
      await events.return(undefined);
    },
  });
  return new Response(body, {
    headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
  });
}

/** The simulator's image routes, spread into the simulator server's route table. */
export const SIM_IMAGE_ROUTES: readonly SimRoute[] = [
  { method: "POST", path: images.paths.generations, handle: generations },
  { method: "POST", path: images.paths.edits, handle: edits },
];
