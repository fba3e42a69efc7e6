// The stream relay: upstream SSE bytes go to the client as they arrive, cut only at event
// boundaries (so an error event can always follow cleanly), while a tap reads usage on the side.
// Adds comment keep-alives while the upstream is silent, ends a broken stream with the protocol's
// error event, and cancels the upstream when the client goes away.
import { createParser } from "eventsource-parser";
import { KEEP_ALIVE, lastEventEnd } from "../wire/sse.ts";
import { failureEvents } from "./failure.ts";
import type { UsageTap } from "./tap.ts";

export type StreamOutcome = "complete" | "broken" | "cancelled";

export interface StreamRelayOptions {
  body: ReadableStream<Uint8Array>;
  tap: UsageTap;
  /** Aborts the upstream request. */
  abort: () => void;
  keepaliveMs: number;
  /** Chat: drop the usage chunk the gateway asked for on the client's behalf. */
  dropUsageChunk: boolean;
  onFirstByte(): void;
  /** Called exactly once, whatever ends the stream; the client stream closes after it resolves. */
  onEnd(outcome: StreamOutcome): Promise<void>;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function isUsageChunk(event: string): boolean {
  return event.includes('"choices":[]') && event.includes('"usage":{');
}

export function relayStream(o: StreamRelayOptions): ReadableStream<Uint8Array> {
  const reader = o.body.getReader();
  const parser = createParser({ onEvent: (e) => o.tap.onEvent(e.event, e.data) });
  let pending: Uint8Array | undefined;
  let finished = false;
  let wrote = false;
  let lastWrite = Date.now();
  let timer: ReturnType<typeof setInterval> | undefined;
  let controller: ReadableStreamDefaultController<Uint8Array> | undefined;

  const write = (bytes: Uint8Array) => {
    if (finished || controller === undefined) return;
    controller.enqueue(bytes);
    lastWrite = Date.now();
    if (!wrote) {
      wrote = true;
      o.onFirstByte();
    }
  };

  const forward = (chunk: Uint8Array) => {
    const bytes = pending ? Buffer.concat([pending, chunk]) : chunk;
    const end = lastEventEnd(bytes, -1);
    if (end < 0) {
      pending = bytes;
      return;
    }
    pending = end < bytes.length ? bytes.slice(end) : undefined;
    const whole = bytes.subarray(0, end);
    const text = decoder.decode(whole);
    if (o.dropUsageChunk && text.includes('"usage":{')) {
      const kept = text.split(/\n\n/).filter((e) => e !== "" && !isUsageChunk(e));
      if (kept.length > 0) write(encoder.encode(`${kept.join("\n\n")}\n\n`));
    } else {
      write(whole);
    }
    parser.feed(text);
  };

  const finish = async (outcome: StreamOutcome, reason: string) => {
    if (finished) return;
    if (outcome === "broken") for (const bytes of failureEvents(o.tap, reason)) write(bytes);
    finished = true;
    clearInterval(timer);
    if (outcome !== "complete") {
      o.abort();
      reader.cancel().catch(() => undefined);
    }
    await o.onEnd(outcome);
    if (outcome !== "cancelled") controller?.close();
  };

  const pump = async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done || finished) break;
        forward(value);
      }
      const complete = o.tap.terminal && pending === undefined;
      await finish(
        complete ? "complete" : "broken",
        "The upstream stream ended before its final event. Retry the request.",
      );
    } catch (thrown) {
      const why = thrown instanceof Error ? thrown.message : String(thrown);
      await finish("broken", `The upstream connection broke mid-stream (${why}). Retry the request.`);
    }
  };

  return new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
      timer = setInterval(
        () => {
          if (Date.now() - lastWrite >= o.keepaliveMs) write(KEEP_ALIVE);
        },
        Math.max(25, o.keepaliveMs / 4),
      );
      void pump();
    },
    cancel() {
      return finish("cancelled", "client went away");
    },
  });
}
