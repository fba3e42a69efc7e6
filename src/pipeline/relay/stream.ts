// The stream relay: upstream SSE bytes go to the client as they arrive, cut only at event ends
// (any line-end dialect; so an error event can always follow cleanly), while the one SSE parse of
// the stream feeds the usage tap. Bytes are passed unchanged, except the Chat usage-only chunk the
// gateway asked for on a client's behalf, dropped by its parsed shape, and the upstream's model
// name where the channel maps the client's id to another (the client sees the id it asked for).
// Adds comment keep-alives while the upstream is silent, ends a broken stream (or one whose event
// outgrows MAX_EVENT_BYTES) with the protocol's error event, stops reading the upstream while a
// slow client's socket is full, and cancels the upstream when the client goes away. The client
// stream is a Bun direct stream: writes go straight to the response socket, with no JS queue.
import { createParser } from "eventsource-parser";
import { log } from "../../base/log.ts";
import { protocolOf } from "../../protocols/index.ts";
import type { BodyReader, SteppedReader } from "../../upstream/guard.ts";
import { EventSplitter, eventSpan, KEEP_ALIVE, SseFeed } from "../../wire/sse.ts";
import type { StreamTap } from "./tap.ts";

export type StreamOutcome = "complete" | "broken" | "cancelled";

export interface StreamRelayOptions {
  /** The upstream's bytes: a stream, or a reader read directly (the guarded body of a native relay). */
  body: ReadableStream<Uint8Array> | BodyReader;
  tap: StreamTap;
  /** Aborts the upstream request. */
  abort: () => void;
  keepaliveMs: number;
  /** Chat: drop the usage chunk the gateway asked for on the client's behalf. */
  dropUsageChunk: boolean;
  /**
   * The model id the client asked for, when the channel maps it to another upstream id: every
   * event's `model` (Chat chunks, Responses `response.model`, Messages `message.model`) is rewritten
   * to it, so the client never sees the upstream's name. Undefined: bytes pass unchanged.
   */
  clientModel?: string | undefined;
  /** The most bytes one event may hold before the stream is ended as broken (MAX_EVENT_BYTES). */
  maxEventBytes?: number | undefined;
  onFirstByte(): void;
  /**
   * Called exactly once, whatever ends the stream; the client stream closes after it resolves (its
   * bytes written last, e.g. the cost comment), or ends in error when it rejects.
   */
  onEnd(outcome: StreamOutcome): Promise<Uint8Array | undefined>;
}

const decoder = new TextDecoder();
const encoder = new TextEncoder();
const EVENT_END = encoder.encode("\n\n");
/**
 * The most bytes kept while waiting for an event's end: room for a Responses `response.completed`
 * that echoes several base64 images, and a bound on what an upstream that never ends an event can
 * make the gateway hold.
 */
export const MAX_EVENT_BYTES = 64 * 1024 * 1024;
/** A JSON `"model": "…"` member, whatever the spacing (an escaped one inside a string never matches). */
const MODEL_MEMBER = /("model"\s*:\s*)"(?:[^"\\]|\\.)*"/g;
/**
 * The deepest a renamed `model` member sits: a Chat chunk's own (depth 1), a Responses event's
 * `response.model` and a Messages `message.model` (depth 2). Deeper ones belong to the client or
 * to a tool (`metadata.model`, an image_generation tool's `model`) and pass unchanged.
 */
const MODEL_DEPTH = 2;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** The nesting depth (open objects and arrays) at `to`, scanning on from `from` at `depth`. */
function depthAt(text: string, from: number, to: number, depth: number): number {
  let d = depth;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      // Skip the string: to its first quote not escaped by an odd run of backslashes.
      let end = text.indexOf('"', i + 1);
      while (end !== -1) {
        let escapes = 0;
        while (text.charCodeAt(end - 1 - escapes) === BACKSLASH) escapes++;
        if (escapes % 2 === 0) break;
        end = text.indexOf('"', end + 1);
      }
      if (end === -1) return d;
      i = end;
    } else if (c === 0x7b || c === 0x5b) d++;
    else if (c === 0x7d || c === 0x5d) d--;
  }
  return d;
}

/**
 * Whole events' bytes with each event's own `model` member (see MODEL_DEPTH) naming `model`
 * (unchanged bytes when none differs). `text` is the bytes decoded, when the caller has it.
 */
export function renameModel(bytes: Uint8Array, model: string, text = decoder.decode(bytes)): Uint8Array {
  const named = JSON.stringify(model);
  let changed = false;
  let depth = 0;
  let scanned = 0;
  const out = text.replace(MODEL_MEMBER, (member, key: string, offset: number) => {
    depth = depthAt(text, scanned, offset, depth);
    scanned = offset + member.length;
    if (depth > MODEL_DEPTH) return member;
    if (member.endsWith(named) && member.length === key.length + named.length) return member;
    changed = true;
    return key + named;
  });
  return changed ? encoder.encode(out) : bytes;
}

export function relayStream(o: StreamRelayOptions): ReadableStream<Uint8Array> {
  const reader = o.body instanceof ReadableStream ? o.body.getReader() : o.body;
  const guarded = "took" in reader ? (reader as SteppedReader) : undefined;
  const splitter = new EventSplitter();
  /** Events parsed from the current run of whole events, and which one to leave out (-1: none). */
  let parsed = 0;
  let dropAt = -1;
  const sse = new SseFeed(
    createParser({
      onEvent: (e) => {
        if (o.tap.onEvent(e.event, e.data) && o.dropUsageChunk) dropAt = parsed;
        parsed++;
      },
    }),
  );
  /** Bytes after the last event end, kept as they came (joined once, when their event ends). */
  const pending: Uint8Array[] = [];
  let pendingBytes = 0;
  const maxEventBytes = o.maxEventBytes ?? MAX_EVENT_BYTES;
  let finished = false;
  let wrote = false;
  /**
   * Writes so far, and since when the keep-alive timer has seen no new one: the timer's ticks (a
   * quarter of the keep-alive interval) keep the silence, so a write reads no clock. A keep-alive
   * goes out after keepaliveMs to keepaliveMs + a tick of silence, as when each write read the clock.
   */
  let writes = 0;
  let seenWrites = 0;
  let silentSince = Date.now();
  let timer: ReturnType<typeof setInterval> | undefined;
  let controller: ReadableStreamDirectController | undefined;
  /**
   * Set when a write found the client's socket full (Bun's direct write returns a promise then;
   * the bytes were taken): the pump reads no more upstream bytes until it settles.
   */
  let draining: Promise<unknown> | undefined;
  /** Resolves the pump's wait for the client to drain (set only while it waits). */
  let resume: (() => void) | undefined;
  const wake = () => {
    const r = resume;
    resume = undefined;
    r?.();
  };

  /** The client's socket is full: wait until it drains or the stream ends. */
  const backlogged = () => draining !== undefined;

  const write = (bytes: Uint8Array) => {
    if (finished || controller === undefined || bytes.length === 0) return;
    const taken = controller.write(bytes);
    if (typeof taken !== "number") draining = taken;
    writes++;
    if (!wrote) {
      wrote = true;
      o.onFirstByte();
    }
  };

  /** Writes the upstream's own event bytes (renamed to the client's model id when mapped). */
  const relay = (bytes: Uint8Array, text?: string) => {
    write(
      o.clientModel === undefined || bytes.length === 0 ? bytes : renameModel(bytes, o.clientModel, text),
    );
  };

  /** Parses a run of whole events once, then writes its bytes (less the usage chunk, if one to drop). */
  const emit = (whole: Uint8Array) => {
    if (o.tap.readsEvents === false) {
      relay(whole);
      return;
    }
    parsed = 0;
    dropAt = -1;
    // Events end on an ASCII line end, so the bytes before one always decode whole.
    const text = decoder.decode(whole);
    sse.feed(text);
    const span = dropAt < 0 ? undefined : eventSpan(whole, dropAt);
    if (span === undefined) relay(whole, text);
    else {
      relay(whole.subarray(0, span[0]));
      relay(whole.subarray(span[1]));
    }
  };

  /** The pending bytes and `head` as one array (no copy when nothing is pending), pending emptied. */
  const takePending = (head: Uint8Array): Uint8Array => {
    const bytes = pending.length === 0 ? head : Buffer.concat([...pending, head]);
    pending.length = 0;
    pendingBytes = 0;
    return bytes;
  };

  /** False when the upstream's current event has grown past the cap (the stream is then ended). */
  const forward = (chunk: Uint8Array): boolean => {
    const end = splitter.lastEnd(chunk);
    if (end === -1) {
      pending.push(chunk);
      pendingBytes += chunk.length;
      return pendingBytes <= maxEventBytes;
    }
    const whole = takePending(end < chunk.length ? chunk.subarray(0, end) : chunk);
    if (end < chunk.length) {
      // A copy: the rest waits for later chunks and must not pin the whole chunk's buffer.
      pending.push(chunk.slice(end));
      pendingBytes = chunk.length - end;
    }
    emit(whole);
    return pendingBytes <= maxEventBytes;
  };

  /** At the upstream's end: a last event without its blank line still counts, then is closed. */
  const forwardTail = () => {
    const tail = pending.length === 0 ? undefined : takePending(new Uint8Array(0));
    parsed = 0;
    dropAt = -1;
    const text = tail === undefined ? "" : decoder.decode(tail);
    if (text !== "") sse.feed(text);
    sse.end();
    // The tail holds at most one event (no event end in it): the usage chunk is left out whole.
    if (tail === undefined || !o.tap.complete || dropAt >= 0) return;
    relay(tail, text);
    if (text.trim() !== "") write(EVENT_END);
  };

  const finish = async (outcome: StreamOutcome, reason: string) => {
    if (finished) return;
    // A broken stream ends with its protocol's error event(s), never a made-up normal finish.
    if (outcome === "broken")
      for (const bytes of protocolOf(o.tap.protocol).failureEvents(o.tap, reason)) write(bytes);
    finished = true;
    clearInterval(timer);
    wake();
    if (outcome !== "complete") {
      o.abort();
      reader.cancel().catch(() => undefined);
    }
    let last: Uint8Array | undefined;
    try {
      last = await o.onEnd(outcome);
    } catch (thrown) {
      // Settling failed (the store or the limiter refused): the answer is not recorded, so the
      // client stream ends in error rather than cleanly, and never stays open.
      log("error", "settling a relayed stream failed", {
        error: thrown instanceof Error ? thrown.message : String(thrown),
      });
      if (outcome !== "cancelled")
        controller?.close(thrown instanceof Error ? thrown : new Error(String(thrown)));
      return;
    }
    if (outcome === "cancelled") return;
    if (last !== undefined) controller?.write(last);
    controller?.close();
  };

  const pump = async () => {
    try {
      for (;;) {
        if (draining !== undefined) {
          // Woken by the drain, or by finish (a client gone away may never drain).
          await new Promise<void>((r) => {
            resume = r;
            draining?.then(wake, wake);
          });
          draining = undefined;
          if (finished) return;
        }
        let step: Awaited<ReturnType<BodyReader["read"]>>;
        // A byte stream's done read carries no value, as BodyReader says.
        if (guarded === undefined) step = (await reader.read()) as typeof step;
        else {
          // The guarded body read without its async wrapper: one promise per chunk, the upstream's.
          try {
            step = guarded.took(await guarded.next());
          } catch (thrown) {
            throw guarded.failed(thrown);
          }
        }
        if (step.done || finished) break;
        if (!forward(step.value)) {
          await finish(
            "broken",
            `The upstream sent an event larger than ${maxEventBytes} bytes without ending it. Retry the request.`,
          );
          return;
        }
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
    type: "direct",
    // Called once by a response (a reader calls again only after it settles, at the end).
    pull(c) {
      if (controller !== undefined) return;
      controller = c;
      timer = setInterval(
        () => {
          // A client that is not reading needs no keep-alive (and its socket buffer must not grow).
          const now = Date.now();
          if (writes !== seenWrites) {
            seenWrites = writes;
            silentSince = now;
          } else if (now - silentSince >= o.keepaliveMs && !backlogged()) {
            write(KEEP_ALIVE);
            seenWrites = writes;
            silentSince = now;
          }
        },
        Math.max(25, o.keepaliveMs / 4),
      );
      return pump();
    },
    cancel() {
      return finish("cancelled", "client went away");
    },
  });
}
