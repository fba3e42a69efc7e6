// The shared path of both image endpoints after decoding: admit (worst case n × (1 + partials)
// generations), route to a channel (failing over while nothing has been sent), relay as one JSON
// result or as SSE (`image.partial_image` … `image.completed`), and settle exactly once on every
// path: success, upstream error, client disconnect, exception.
import type { Principal } from "../auth/keys.ts";
import type { Admission } from "../billing/meter.ts";
import type { ModelInfo } from "../catalog/models.ts";
import type { Gateway } from "../gateway.ts";
import type { RequestContext } from "../http/context.ts";
import { log } from "../log.ts";
import { type ImageEvent, type ImageJob, imageUpstream } from "../upstream/images.ts";
import { asGatewayError, GatewayError } from "../wire/errors.ts";
import { completedFrame, errorFrame, partialImageFrame } from "../wire/images-events.ts";
import { ImageTally } from "./images-tally.ts";

export interface ImageRequest {
  principal: Principal;
  model: ModelInfo;
  endpoint: string;
  job: Omit<ImageJob, "upstreamModel">;
}

interface Opened {
  first: IteratorResult<ImageEvent>;
  events: AsyncGenerator<ImageEvent>;
}

const RETRYABLE = new Set(["upstream_failed", "upstream_timeout", "no_channel"]);

export async function runImages(
  ctx: RequestContext,
  gateway: Gateway,
  request: ImageRequest,
): Promise<Response> {
  const { options } = request.job;
  const admission = await gateway.meter.admit({
    requestId: ctx.requestId,
    principal: request.principal,
    model: request.model,
    endpoint: request.endpoint,
    method: "POST",
    stream: options.stream,
    clientAddress: ctx.client?.toString(),
    endUser: options.user,
    worstCase: {
      kind: "image",
      generations: options.n * (1 + options.partialImages),
      quality: options.quality,
      size: options.size,
      ...(options.inputFidelity ? { inputFidelity: options.inputFidelity } : {}),
    },
  });
  const tally = new ImageTally(options, admission, ctx.startedAt);
  const abort = new AbortController();
  let opened: Opened;
  try {
    opened = await open(gateway, request, abort.signal, tally);
  } catch (thrown) {
    await tally.settle(asGatewayError(thrown).status);
    throw thrown;
  }
  if (options.stream) return streamResponse(opened, tally, admission, abort);
  return jsonResponse(opened, tally, admission, abort);
}

/** Tries the model's channels in order until one yields its first event. */
async function open(
  gateway: Gateway,
  request: ImageRequest,
  signal: AbortSignal,
  tally: ImageTally,
): Promise<Opened> {
  const channels = gateway.channels.forModel(request.model.id);
  if (channels.length === 0) {
    throw new GatewayError(
      "no_channel",
      `no upstream channel serves ${request.model.id}; add one to the configuration`,
    );
  }
  let lastError: unknown;
  for (const channel of channels) {
    tally.channels.push(channel.config.name);
    try {
      const upstream = imageUpstream(channel, gateway);
      const events = upstream.run(
        { ...request.job, upstreamModel: channel.upstreamModel(request.model.id) },
        signal,
      );
      const first = await events.next();
      tally.markFirstByte();
      return { first, events };
    } catch (thrown) {
      if (!(thrown instanceof GatewayError) || !RETRYABLE.has(thrown.kind)) throw thrown;
      lastError = thrown;
    }
  }
  throw lastError;
}

async function jsonResponse(opened: Opened, tally: ImageTally, admission: Admission, abort: AbortController) {
  const { events } = opened;
  try {
    for (let step = opened.first; !step.done; step = await events.next()) tally.record(step.value);
    const result = tally.result();
    await tally.settle(200);
    return Response.json(result, { headers: admission.headers });
  } catch (thrown) {
    abort.abort();
    await events.return(undefined).catch(() => undefined);
    await tally.settle(asGatewayError(thrown).status);
    throw thrown;
  }
}

function streamResponse(
  opened: Opened,
  tally: ImageTally,
  admission: Admission,
  abort: AbortController,
): Response {
  const { events } = opened;
  let step = opened.first;
  let index = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        if (!step.done) {
          const event = step.value;
          tally.record(event);
          if (event.type === "partial") {
            controller.enqueue(partialImageFrame(index++, event.b64, Math.floor(Date.now() / 1000)));
          }
          step = await events.next();
        }
        if (step.done) {
          const result = tally.result();
          await tally.settle(200);
          controller.enqueue(completedFrame(result));
          controller.close();
        }
      } catch (thrown) {
        const error = asGatewayError(thrown);
        if (error.kind === "internal") log("error", "image stream failed", { error: String(thrown) });
        await tally.settle(200);
        controller.enqueue(errorFrame(error.toOpenAI().error));
        controller.close();
      }
    },
    async cancel() {
      abort.abort();
      await events.return(undefined).catch(() => undefined);
      await tally.settle(200);
    },
  });
  return new Response(body, {
    headers: { ...admission.headers, "content-type": "text/event-stream", "cache-control": "no-cache" },
  });
}
