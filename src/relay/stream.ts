// The stream relay: upstream SSE bytes go to the client as they arrive, cut only at event ends
// (any line-end dialect; so an error event can always follow cleanly), while the one SSE parse of
// the stream feeds the usage tap. Bytes are passed unchanged, except the Chat usage-only chunk the
// gateway asked for on a client's behalf, dropped by its parsed shape.
// Adds comment keep-alives while the upstream is silent, ends a broken stream with the protocol's
// error event, and cancels the upstream when the client goes away.
import { createParser } from "eventsource-parser";
import { EventSplitter, KEEP_ALIVE, SseFeed } from "../wire/sse.ts";
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

const decoder = new TextDecoder();
const EVENT_END = new TextEncoder().encode("\n\n");

export function relayStream(o: StreamRelayOptions): ReadableStream<Uint8Array> {
  const reader = o.body.getReader();
  const splitter = new EventSplitter();
  const ends: number[] = [];
  /** Set by the parser when the event just parsed is the Chat usage-only chunk. */
  let usageChunk = false;
  const sse = new SseFeed(
    createParser({
      onEvent: (e) => {
        if (o.tap.onEvent(e.event, e.data)) usageChunk = true;
      },
    }),
  );
  let pending: Uint8Array | undefined;
  let finished = false;
  let wrote = false;
  let lastWrite = Date.now();
  let timer: ReturnType<typeof setInterval> | undefined;
  let controller: ReadableStreamDefaultController<Uint8Array> | undefined;

  const write = (bytes: Uint8Array) => {
    if (finished || controller === undefined || bytes.length === 0) return;
    controller.enqueue(bytes);
    lastWrite = Date.now();
    if (!wrote) {
      wrote = true;
      o.onFirstByte();
    }
  };

  // Parses and writes whole events one by one, leaving out the usage-only chunk: whatever its
  // framing or whitespace, the parsed event says which bytes it was.
  const forwardDropping = (bytes: Uint8Array, offset: number) => {
    let start = 0;
    let kept = 0;
    for (const end of ends) {
      usageChunk = false;
      sse.feed(decoder.decode(bytes.subarray(start, end + offset)));
      if (usageChunk) {
        write(bytes.subarray(kept, start));
        kept = end + offset;
      }
      start = end + offset;
    }
    write(bytes.subarray(kept, start));
  };

  const forward = (chunk: Uint8Array) => {
    ends.length = 0;
    splitter.scan(chunk, ends);
    const offset = pending?.length ?? 0;
    const bytes = pending ? Buffer.concat([pending, chunk]) : chunk;
    const last = ends.at(-1);
    if (last === undefined) {
      pending = bytes;
      return;
    }
    pending = last + offset < bytes.length ? bytes.slice(last + offset) : undefined;
    if (o.dropUsageChunk) forwardDropping(bytes, offset);
    else {
      // Events end on an ASCII line end, so the bytes before one always decode whole.
      const whole = bytes.subarray(0, last + offset);
      sse.feed(decoder.decode(whole));
      write(whole);
    }
  };

  /** At the upstream's end: a last event without its blank line still counts, then is closed. */
  const forwardTail = () => {
    const tail = pending;
    pending = undefined;
    usageChunk = false;
    const text = tail === undefined ? "" : decoder.decode(tail);
    if (text !== "") sse.feed(text);
    sse.end();
    if (tail === undefined || !o.tap.complete || (o.dropUsageChunk && usageChunk)) return;
    write(tail);
    if (text.trim() !== "") write(EVENT_END);
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
      forwardTail();
      await finish(
        o.tap.complete ? "complete" : "broken",
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
