// The shared path of both image endpoints after decoding, inside the billing layer
// (src/billing/layer.ts), as the text path: admit (worst case n × (1 + partials)
// generations), route to a channel through the shared failover loop (src/upstream/retry.ts: priority,
// weight, circuits, caps, retries, timeouts — only while nothing has been sent), relay as one JSON
// result or as SSE (`image.partial_image` … `image.completed`, each also in the official event's
// shape: src/wire/images-events.ts), and settle exactly once on every
// path: success, upstream error, client disconnect, exception — billing what the client was sent.

import type { Principal } from "../auth/keys.ts";
import { Handoff } from "../base/handoff.ts";
import { log } from "../base/log.ts";
import type { Nanos } from "../base/types.ts";
import { type Ending, type MeteredAnswer, metered } from "../billing/layer.ts";
import type { ModelInfo } from "../catalog/models.ts";
import type { Gateway } from "../gateway.ts";
import type { RequestContext } from "../http/context.ts";
import { attempt } from "../upstream/attempt.ts";
import type { Lease } from "../upstream/channels.ts";
import type { AttemptGuard } from "../upstream/guard.ts";
import type { ImageEvent, ImageJob } from "../upstream/image-job.ts";
import { imageUpstream, servesImages } from "../upstream/images.ts";
import { type Attempt, failover } from "../upstream/retry.ts";
import { costComment } from "../wire/cost.ts";
import { asGatewayError, GatewayError } from "../wire/errors.ts";
import { completedFrame, errorFrame, partialImageFrame } from "../wire/images-events.ts";
import { admitInput } from "./admit.ts";
import { upstreamEnv } from "./call.ts";
import { notServed } from "./channels.ts";
import { ImageTally } from "./images-tally.ts";

export interface ImageRequest {
  principal: Principal;
  model: ModelInfo;
  /** The alias the client named for `model`, if it named one. */
  alias?: string | undefined;
  endpoint: string;
  job: Omit<ImageJob, "upstreamModel">;
}

interface Opened {
  first: IteratorResult<ImageEvent>;
  events: AsyncGenerator<ImageEvent>;
}

/**
 * Inside the billing layer (src/billing/layer.ts: admission, one settlement, the x-ratelimit
 * headers): route and call until a channel yields its first event, then relay. A failure settles
 * what was already produced (the tally's figures).
 */
export function runImages(ctx: RequestContext, gateway: Gateway, request: ImageRequest): Promise<Response> {
  const { options } = request.job;
  const tally = new ImageTally(options, ctx.startedAt);
  const admit = admitInput(ctx, {
    principal: request.principal,
    model: request.model,
    endpoint: request.endpoint,
    stream: options.stream,
    endUser: options.user,
    alias: request.alias,
    worstCase: {
      kind: "image",
      generations: options.n * (1 + options.partialImages),
      quality: options.quality,
      size: options.size,
      ...(options.inputFidelity ? { inputFidelity: options.inputFidelity } : {}),
    },
  });
  const work = async (channels: string[]): Promise<MeteredAnswer> => {
    const abort = new AbortController();
    const opened = await open(gateway, request, abort.signal, channels, tally);
    if (options.stream) return streamResponse(request.job.kind, opened, tally, abort);
    return jsonResponse(opened, tally, abort);
  };
  // Untraced admission and settlement: the settlement span's attributes are token counts, and an
  // image request's usage is generations (its spans would report zero tokens).
  return metered(gateway.meter, admit, undefined, work, (status) => tally.ending(status), ctx.request.signal);
}

/** Tries the model's channels (priority, weight, circuits, caps) until one yields its first event. */
async function open(
  gateway: Gateway,
  request: ImageRequest,
  signal: AbortSignal,
  tried: string[],
  tally: ImageTally,
): Promise<Opened> {
  const channels = gateway.channels.forModel(request.model.id).filter(servesImages);
  if (channels.length === 0) {
    throw new GatewayError("model_not_served", notServed(request.model.id, "images"));
  }
  const won = await failover(channels, (lease) => attemptImages(gateway, request, lease, signal), {
    policy: gateway.config.routing,
    tried,
    signal,
    replayable: true,
  });
  tally.markFirstByte();
  return won.value;
}

/**
 * One attempt on one channel (src/upstream/attempt.ts): its first event under the channel's
 * timeouts. An upstream's refusal is thrown by its adapter as an error of the table.
 */
function attemptImages(
  gateway: Gateway,
  request: ImageRequest,
  lease: Lease,
  signal: AbortSignal,
): Promise<Attempt<Opened>> {
  return attempt<Opened>(lease, upstreamEnv(gateway), signal, async (guard) => {
    const channel = lease.channel;
    const upstream = imageUpstream(channel, gateway, lease.credential);
    const job = { ...request.job, upstreamModel: channel.upstreamModel(request.model.id) };
    const events = upstream.run(job, guard.signal);
    const first = await events.next();
    guard.markFirstByte();
    if (first.done) {
      // Nothing more will be read, so the generator below would never start nor end the lease.
      guard.dispose();
      lease.release("success");
      return { ok: true, value: { first, events } };
    }
    return { ok: true, value: { first, events: guarded(events, guard, lease) } };
  });
}

/** The rest of the events, feeding the idle timer; the lease ends with them. */
async function* guarded(
  events: AsyncGenerator<ImageEvent>,
  guard: AttemptGuard,
  lease: Lease,
): AsyncGenerator<ImageEvent> {
  let outcome: "success" | "failure" | "neutral" = "neutral";
  try {
    for (let step = await events.next(); !step.done; step = await events.next()) {
      guard.markChunk();
      yield step.value;
    }
    if (guard.fired !== undefined) throw guard.timeoutError(guard.fired);
    outcome = "success";
  } catch (thrown) {
    outcome = "failure";
    throw guard.fired === undefined ? thrown : guard.timeoutError(guard.fired);
  } finally {
    guard.dispose();
    lease.release(outcome);
    await events.return(undefined).catch(() => undefined);
  }
}

/** The images read to the end, then one JSON result (complete: settled before it is returned). */
async function jsonResponse(
  opened: Opened,
  tally: ImageTally,
  abort: AbortController,
): Promise<MeteredAnswer> {
  const { events } = opened;
  try {
    for (let step = opened.first; !step.done; step = await events.next()) tally.record(step.value);
    const result = tally.result();
    tally.imagesSent();
    return { response: Response.json(result), complete: tally.ending(200) };
  } catch (thrown) {
    abort.abort();
    await events.return(undefined).catch(() => undefined);
    throw thrown;
  }
}

/**
 * The images as SSE, each progress image as it arrives, the final images together in
 * `image.completed`: every stream ends with that event or an error event. The stream reports its
 * settlement when it ends (completed, failed or cancelled) — what was delivered: the progress images
 * sent, and the final images only with `image.completed` — and sends its last frame once the
 * settlement is recorded.
 */
function streamResponse(
  kind: ImageJob["kind"],
  opened: Opened,
  tally: ImageTally,
  abort: AbortController,
): MeteredAnswer {
  const { events } = opened;
  const ended = new Handoff<Ending, Nanos>();
  let step = opened.first;
  let index = 0;
  const partialsOf = new Map<number, number>();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        // Each pull sends one frame: a final image is only kept (it leaves with image.completed),
        // so reading goes on past it — a pull that sent nothing would never be called again.
        while (!step.done) {
          const event = step.value;
          tally.record(event);
          if (event.type === "partial") {
            // Progress images count per final image; an upstream that does not say counts itself.
            const image = tally.imagesSoFar();
            const partialIndex = event.partialIndex ?? partialsOf.get(image) ?? 0;
            partialsOf.set(image, partialIndex + 1);
            const now = Math.floor(Date.now() / 1000);
            const meta = tally.describe(kind, event);
            controller.enqueue(partialImageFrame(meta, index++, partialIndex, event.b64, now));
            tally.partialSent();
            step = await events.next();
            return;
          }
          step = await events.next();
        }
        const result = tally.result();
        tally.imagesSent();
        const cost = await ended.send(tally.ending(200));
        controller.enqueue(completedFrame(tally.describe(kind), result));
        controller.enqueue(costComment(cost));
        controller.close();
      } catch (thrown) {
        const error = asGatewayError(thrown);
        if (error.kind === "internal") log("error", "image stream failed", { error: String(thrown) });
        const cost = await ended.send(tally.ending(200));
        controller.enqueue(errorFrame(error.toOpenAI().error));
        controller.enqueue(costComment(cost));
        controller.close();
      }
    },
    async cancel() {
      abort.abort();
      await events.return(undefined).catch(() => undefined);
      await ended.send(tally.ending(200));
    },
  });
  const headers = { "content-type": "text/event-stream", "cache-control": "no-cache" };
  return { response: new Response(body, { headers }), ended };
}
