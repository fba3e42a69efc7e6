// One upstream attempt under the channel's timeouts. The guard's signal aborts the call when the
// client goes away or a timer fires: first byte (from the start until the first body byte — so a
// channel that sent headers and then hung can still be failed over), total (the whole exchange)
// and idle (the longest gap between body chunks). `openBody()` waits for the first body byte and
// returns a reader replaying it (`GuardedBody`: the relay's one read loop pulls the upstream's
// chunks straight through it, no stream in between), whose end releases the channel lease with the
// outcome and records the upstream time (the overhead figure is total time minus this); `open()`
// wraps that reader in a Response for callers that need a stream.
import type { Timeouts } from "../config/channels.ts";
import { GatewayError } from "../wire/errors.ts";
import type { Lease } from "./channels.ts";

type ReadResult = { done: true; value?: undefined } | { done: false; value: Uint8Array };
/** The part of a body reader the guard uses, and what a guarded body offers its reader. */
export interface BodyReader {
  read(): Promise<ReadResult>;
  cancel(reason?: unknown): Promise<void>;
}

/**
 * A body reader whose reads a loop may do itself (GuardedBody): `next()` is the source's own read,
 * its result goes to `took`, a failure to `failed`, so the loop awaits one promise per chunk, not a
 * wrapper's as well. Told apart from other readers by `took` (the relay imports no upstream/ code).
 */
export interface SteppedReader extends BodyReader {
  next(): Promise<ReadResult> | ReadResult;
  took(step: ReadResult): ReadResult;
  failed(thrown: unknown): unknown;
}

/** Answers declared up to this size are read in one native step (src/request/body.ts reads requests alike). */
const NATIVE_ANSWER_BYTES = 64 * 1024;

export type TimeoutKind = "connect" | "first_byte" | "idle" | "total";

/** Upstream time of one attempt, in performance.now() milliseconds. */
export interface UpstreamTiming {
  startedAt: number;
  firstByteAt: number | undefined;
  endedAt: number | undefined;
}

export interface ResolvedTimeouts extends Required<Omit<Timeouts, "first_byte_ms">> {
  first_byte_ms: number;
}

export class AttemptGuard {
  readonly signal: AbortSignal;
  readonly timing: UpstreamTiming = {
    startedAt: performance.now(),
    firstByteAt: undefined,
    endedAt: undefined,
  };
  #fired: TimeoutKind | undefined;
  readonly #controller = new AbortController();
  readonly #client: AbortSignal;
  readonly #channel: string;
  readonly #timeouts: ResolvedTimeouts;
  /**
   * One timer per attempt, set for the earliest deadline still ahead (first byte, total, idle) and
   * set again when it wakes before a deadline passed: three timers set and cleared per attempt
   * were a measurable share of a request's CPU.
   */
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** When the timer is due, in performance.now() time. */
  #timerAt = Number.POSITIVE_INFINITY;
  #lastChunkAt = 0;
  #reader: BodyReader | undefined;

  constructor(channel: string, timeouts: ResolvedTimeouts, client: AbortSignal) {
    this.#channel = channel;
    this.#timeouts = timeouts;
    this.#client = client;
    // One controller per attempt, aborted by the client's signal through a listener (removed in
    // dispose: a listener left on the client's signal would keep the finished attempt alive),
    // by the timers and by the connect probe: cheaper than AbortSignal.any() joins.
    this.signal = this.#controller.signal;
    if (client.aborted) this.#controller.abort(client.reason);
    else client.addEventListener("abort", this.#onClientAbort, { once: true });
    this.#schedule();
  }

  readonly #onClientAbort = () => this.abort(this.#client.reason);

  /** Stops the call from this side (a relayed stream that ended early). */
  readonly stop = (): void =>
    this.abort(new DOMException("The relay stopped the upstream call.", "AbortError"));

  /**
   * Aborts the attempt. An in-process body does not watch the signal: cancelling its reader ends
   * a pending read.
   */
  readonly abort = (reason: unknown): void => {
    if (this.signal.aborted) return;
    this.#controller.abort(reason);
    void this.#reader?.cancel().catch(() => undefined);
  };

  /** The timeout that ended this attempt, if one did. */
  get fired(): TimeoutKind | undefined {
    return this.#fired;
  }

  /** The client-facing error for the timeout that fired. */
  timeoutError(kind: TimeoutKind): GatewayError {
    const limits: Record<TimeoutKind, [number, string]> = {
      connect: [this.#timeouts.connect_ms, "to connect"],
      first_byte: [this.#timeouts.first_byte_ms, "to send its first byte"],
      idle: [this.#timeouts.idle_ms, "between two chunks of its answer"],
      total: [this.#timeouts.total_ms, "for its whole answer"],
    };
    const [ms, what] = limits[kind];
    return new GatewayError(
      "upstream_timeout",
      `Channel "${this.#channel}" took longer than ${ms} ms ${what} (${kind.replace("_", "-")} timeout). Retry later.`,
      { code: `upstream_${kind}_timeout` },
    );
  }

  /** Stops every timer (the attempt failed before its body was handed on). */
  dispose(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#client.removeEventListener("abort", this.#onClientAbort);
    this.#end();
  }

  /**
   * Waits for the first body byte under the first-byte timeout and returns the answer with a
   * body that replays it; the lease is released when that body ends, fails or is cancelled.
   */
  async open(response: Response, lease: Lease): Promise<Response> {
    const body = await this.openBody(response, lease);
    if (body === undefined) return response;
    return new Response(body.stream(), { status: response.status, headers: response.headers });
  }

  /**
   * Waits for the first body byte under the first-byte timeout and returns a reader of the body
   * that replays it (undefined, lease released, when the answer has no body).
   */
  async openBody(response: Response, lease: Lease): Promise<GuardedBody | undefined> {
    const body = response.body;
    if (body === null) {
      this.dispose();
      lease.release("success");
      return undefined;
    }
    const reader = body.getReader();
    this.#reader = reader;
    const first = await reader.read();
    this.markFirstByte();
    return new GuardedBody(this, reader, first, lease);
  }

  /**
   * Reads a whole answer (a non-stream one) under the same timeouts and releases the lease: no
   * replaying body in between, the bytes are handed on as they are. A small declared body is read
   * in one native step (`readDeclared`); others chunk by chunk.
   */
  async readAll(response: Response, lease: Lease): Promise<Uint8Array> {
    // Only an answer from the network (its url is set): its read ends when the call is aborted.
    // An in-process one (the simulator's) is ended by cancelling its reader, so it is read below.
    if (response.url !== "") {
      const declared = Number(response.headers.get("content-length"));
      if (declared > 0 && declared <= NATIVE_ANSWER_BYTES) return this.#readDeclared(response, lease);
    }
    const body = response.body;
    const chunks: Uint8Array[] = [];
    if (body !== null) {
      const reader = body.getReader();
      this.#reader = reader;
      for (;;) {
        const step = await reader.read();
        // An aborted call may end its body early (an in-process body ends when cancelled): never a success.
        if (this.signal.aborted)
          throw this.#fired !== undefined ? this.timeoutError(this.#fired) : this.signal.reason;
        if (step.done) break;
        if (chunks.length === 0) this.markFirstByte();
        else this.markChunk();
        chunks.push(step.value);
      }
    }
    this.dispose();
    lease.release("success");
    return chunks.length === 1 ? (chunks[0] as Uint8Array) : Buffer.concat(chunks);
  }

  /**
   * A body of a declared small length in one native read: no stream, reader and promise per chunk
   * (a share of the bytes a request allocates, and so of the young collections). The read shows no
   * progress, so the first-byte deadline covers the whole body (with the total one); the idle gap
   * begins once it is in. A timeout or the client's abort aborts the call, which fails the read.
   */
  async #readDeclared(response: Response, lease: Lease): Promise<Uint8Array> {
    const bytes = await response.bytes();
    if (this.signal.aborted)
      throw this.#fired !== undefined ? this.timeoutError(this.#fired) : this.signal.reason;
    this.markFirstByte();
    this.dispose();
    lease.release("success");
    return bytes;
  }

  /** The first byte (or event) arrived: the first-byte deadline gives way to the idle one. */
  markFirstByte(): void {
    if (this.#fired !== undefined) throw this.timeoutError(this.#fired);
    if (this.timing.firstByteAt !== undefined) return;
    this.timing.firstByteAt = performance.now();
    this.#lastChunkAt = this.timing.firstByteAt;
    this.#schedule();
  }

  /** Another chunk (or event) arrived: the idle gap starts again. */
  markChunk(): void {
    this.#lastChunkAt = performance.now();
  }

  /** Throws the error of the timeout that fired, if one did (as a plain Error: the stream breaks). */
  checkFired(): void {
    if (this.#fired !== undefined) throw new Error(this.timeoutError(this.#fired).message);
  }

  /** The earliest deadline still ahead: total, and first byte until it came, idle after. */
  #deadline(): number {
    const { startedAt, firstByteAt } = this.timing;
    const total = startedAt + this.#timeouts.total_ms;
    const next =
      firstByteAt === undefined
        ? startedAt + this.#timeouts.first_byte_ms
        : this.#lastChunkAt + this.#timeouts.idle_ms;
    return Math.min(total, next);
  }

  #schedule(): void {
    const at = this.#deadline();
    // A timer due earlier stays: it wakes, finds no deadline passed and schedules again.
    if (this.#timer !== undefined && this.#timerAt <= at) return;
    clearTimeout(this.#timer);
    this.#timerAt = at;
    this.#timer = setTimeout(this.#wake, Math.max(1, at - performance.now()));
  }

  readonly #wake = (): void => {
    this.#timer = undefined;
    if (this.#fired !== undefined || this.timing.endedAt !== undefined) return;
    const now = performance.now();
    const { startedAt, firstByteAt } = this.timing;
    if (firstByteAt === undefined && now >= startedAt + this.#timeouts.first_byte_ms)
      this.#fire("first_byte");
    else if (now >= startedAt + this.#timeouts.total_ms) this.#fire("total");
    else if (firstByteAt !== undefined && now >= this.#lastChunkAt + this.#timeouts.idle_ms)
      this.#fire("idle");
    else this.#schedule();
  };

  #fire(kind: TimeoutKind): void {
    if (this.#fired !== undefined || this.timing.endedAt !== undefined) return;
    this.#fired = kind;
    this.abort(this.timeoutError(kind));
  }

  #end(): void {
    if (this.timing.endedAt !== undefined) return;
    this.timing.endedAt = performance.now();
  }
}

/**
 * An attempt's answer body after its first byte: each read marks the idle gap, fails with the
 * timeout that fired, and the body's end (done, failed or cancelled) releases the lease once.
 */
export class GuardedBody implements SteppedReader {
  readonly #guard: AttemptGuard;
  readonly #reader: BodyReader;
  readonly #lease: Lease;
  #pending: ReadResult | undefined;
  #released = false;

  constructor(guard: AttemptGuard, reader: BodyReader, first: ReadResult, lease: Lease) {
    this.#guard = guard;
    this.#reader = reader;
    this.#pending = first;
    this.#lease = lease;
  }

  async read(): Promise<ReadResult> {
    try {
      return this.took(await this.next());
    } catch (thrown) {
      throw this.failed(thrown);
    }
  }

  /**
   * The read under `read()`, for a loop that reads this body itself (the stream relay): the
   * upstream reader's own read (or the replayed first chunk), with no promise of the guard's in
   * between (an async wrapper per chunk cost a measurable share of a relayed event). Its result
   * goes to `took`, a rejection or what `took` threw to `failed`.
   */
  next(): Promise<ReadResult> | ReadResult {
    const pending = this.#pending;
    if (pending === undefined) return this.#reader.read();
    this.#pending = undefined;
    return pending;
  }

  /** A read's result: fails with the timeout that fired, marks the idle gap, releases at the end. */
  took(step: ReadResult): ReadResult {
    this.#guard.checkFired();
    if (step.done) this.#release(this.#guard.signal.aborted ? "neutral" : "success");
    else this.#guard.markChunk();
    return step;
  }

  /** A read that failed: the lease released as a failure, the error to throw (the timeout's, if one fired). */
  failed(thrown: unknown): unknown {
    this.#release("failure");
    const fired = this.#guard.fired;
    return fired === undefined ? thrown : new Error(this.#guard.timeoutError(fired).message);
  }

  async cancel(reason?: unknown): Promise<void> {
    this.#release("neutral");
    await this.#reader.cancel(reason).catch(() => undefined);
  }

  /** The body as a pull-based stream (a translated relay pipes it through a transform). */
  stream(): ReadableStream<Uint8Array> {
    return new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        try {
          const step = await this.read();
          if (step.done) controller.close();
          else controller.enqueue(step.value);
        } catch (thrown) {
          controller.error(thrown);
        }
      },
      cancel: (reason) => this.cancel(reason),
    });
  }

  #release(outcome: "success" | "failure" | "neutral"): void {
    if (this.#released) return;
    this.#released = true;
    this.#guard.dispose();
    this.#lease.release(outcome);
  }
}
