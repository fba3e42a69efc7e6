// GET /admin/v1/events: every API request as server-sent events, live from the gateway's feed
// (settled ones, and refused or unbilled ones with their error code); in a cluster, every node's.
// Backpressure: each reader has a bounded queue; a reader whose queue is full (it stopped
// reading) is sent a final `dropped` event and disconnected. Publishing never waits on a reader.
// A feed ends with a `revoked` event when its admin token is revoked (src/admin/sessions.ts).

import { log } from "../base/log.ts";
import { formatUsd } from "../base/money.ts";
import type { UsageEvent } from "../billing/feed.ts";
import { adminRoute } from "./http.ts";
import { holdSession } from "./sessions.ts";
import { isoTime, usageCounts } from "./view.ts";

/** Events a reader may have queued before it is dropped. */
export const READER_QUEUE = 1024;
const HEARTBEAT_MS = 15_000;
const encoder = new TextEncoder();

/** The record a reader receives for one request (documented in docs/admin-api.md). */
export function eventRecord(e: UsageEvent) {
  return {
    request_id: e.requestId,
    client_request_id: e.clientRequestId ?? null,
    at: isoTime(e.at),
    method: e.method,
    endpoint: e.endpoint,
    key_id: e.keyId,
    key_name: e.keyName,
    account_id: e.accountId,
    model: e.model,
    stream: e.stream,
    status: e.status,
    ...usageCounts(e),
    cost_nanos: e.costNanos,
    cost_usd: formatUsd(e.costNanos),
    usage_source: e.usageSource,
    latency_ms: e.latencyMs,
    ttfb_ms: e.ttfbMs,
    channels: e.channels,
    client_address: e.clientAddress,
    error_code: e.errorCode ?? null,
  };
}

function frame(event: string, data: unknown): Uint8Array {
  return encoder.encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

export const events = adminRoute(async ({ gateway, ctx }) => {
  let unsubscribe = () => {};
  let unregister = () => {};
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  let release = () => {};
  const stop = () => {
    release();
    unsubscribe();
    unregister();
    if (heartbeat) clearInterval(heartbeat);
  };
  const stream = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        controller.enqueue(frame("ready", { queue: READER_QUEUE }));
        // The whole cluster's requests when nodes share a Redis (the TUI tails every node).
        unsubscribe = gateway.feed.subscribe(
          (event) => {
            // desiredSize counts free slots of the bounded queue; at 0 the reader has stalled.
            if ((controller.desiredSize ?? 0) <= 0) {
              stop();
              log("warn", "admin event reader too slow; dropped", { request_id: ctx.requestId });
              controller.enqueue(frame("dropped", { reason: "reader too slow", queued: READER_QUEUE }));
              controller.close();
              return;
            }
            controller.enqueue(frame("request", eventRecord(event)));
          },
          { cluster: true },
        );
        heartbeat = setInterval(() => {
          if ((controller.desiredSize ?? 0) > 0) controller.enqueue(encoder.encode(": keep-alive\n\n"));
        }, HEARTBEAT_MS);
        heartbeat.unref();
        release = holdSession(gateway, ctx, () => {
          stop();
          controller.enqueue(frame("revoked", { reason: "admin token revoked" }));
          controller.close();
        });
        // A drain ends the feed at its start: it never finishes on its own.
        unregister = gateway.longLived.add(() => {
          stop();
          controller.enqueue(frame("closing", { reason: "server shutting down" }));
          controller.close();
        });
      },
      cancel() {
        stop();
      },
    },
    new CountQueuingStrategy({ highWaterMark: READER_QUEUE }),
  );
  ctx.request.signal.addEventListener("abort", stop, { once: true });
  return new Response(stream, {
    headers: {
      "content-type": "text/event-stream",
      "cache-control": "no-store",
      "x-accel-buffering": "no",
    },
  });
});
