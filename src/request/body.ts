// Reading a request body: under a size cap (413 before buffering more than the cap), within the
// body timeouts (408: idle between chunks and total), a closed client reported as such (never as
// an internal failure). A route whose handler takes the body has it read here, at the edge, before
// the handler runs (`withBody`); parsing it is decoding (src/wire/json.ts). Outside src/http/, so
// the rows that must authenticate before reading (images, the admin API) and the WebSocket mode
// read with the same rules without calling back into the edge.
import type { Gateway } from "../gateway.ts";
import type { RequestContext } from "../http/context.ts";
import type { Handler } from "../http/edge.ts";
import { timeline } from "../telemetry/timeline.ts";
import { GatewayError } from "../wire/errors.ts";
import { parseJson } from "../wire/json.ts";
import { CappedBuffer, declaredLength, tooLarge } from "./capped.ts";
import { contentCodings, decodeBody } from "./encoding.ts";

/** How long a body may take: the longest pause between two chunks and the whole read. */
export interface BodyTimeouts {
  idleMs: number;
  totalMs: number;
}

export const DEFAULT_BODY_TIMEOUTS: BodyTimeouts = { idleMs: 15_000, totalMs: 60_000 };

// Set once per process by the listener from `[server]` (src/http/listener.ts); every reader of
// a request body in this process uses them.
let timeouts: BodyTimeouts = DEFAULT_BODY_TIMEOUTS;

export function setBodyTimeouts(next: BodyTimeouts): void {
  timeouts = next;
}

/** Declared bodies up to this size are read in one native step (total deadline only). */
const NATIVE_READ_BYTES = 64 * 1024;

function timedOut(what: "idle" | "total"): GatewayError {
  const message =
    what === "idle"
      ? `The request body stalled: no bytes for ${timeouts.idleMs / 1000} s (server.body_idle_timeout_seconds). Send the body without pauses.`
      : `The request body took longer than ${timeouts.totalMs / 1000} s to arrive (server.body_timeout_seconds). Send a smaller body or use a faster link.`;
  // The rest of the body may still come: the connection cannot carry another request.
  return new GatewayError("body_timeout", message, { headers: { connection: "close" } });
}

/** What a failed read means: the client went away, or something the edge logs as a failure. */
function readFailure(request: Request, thrown: unknown): unknown {
  if (thrown instanceof GatewayError) return thrown;
  if (request.signal.aborted) {
    return new GatewayError("client_closed", "The client closed the connection before the body arrived.");
  }
  return thrown;
}

/** A timer that rejects with a 408 at the earliest of the idle and total deadlines. */
class BodyClock {
  readonly #deadline = performance.now() + timeouts.totalMs;

  /** Races `pending` against the deadlines; `idle` adds the idle limit (a chunk must arrive). */
  async race<T>(pending: Promise<T>, idle: boolean): Promise<T> {
    const left = this.#deadline - performance.now();
    if (left <= 0) throw timedOut("total");
    const idleFirst = idle && timeouts.idleMs < left;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(timedOut(idleFirst ? "idle" : "total")),
        idleFirst ? timeouts.idleMs : left,
      );
    });
    try {
      return await Promise.race([pending, expired]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * The body in one native read under the total deadline: one promise settled by whichever comes
 * first, the bytes or the timer (no race array, async wrapper or clock object per request).
 */
function readWhole(request: Request): Promise<Uint8Array> {
  return new Promise<Uint8Array>((resolve, reject) => {
    const timer = setTimeout(() => reject(timedOut("total")), timeouts.totalMs);
    request.bytes().then(
      (bytes) => {
        clearTimeout(timer);
        resolve(bytes);
      },
      (thrown) => {
        clearTimeout(timer);
        reject(readFailure(request, thrown));
      },
    );
  });
}

/** Reads a body stream chunk by chunk within the body timeouts; `cancel` stops early. */
export class TimedReader {
  readonly #clock = new BodyClock();
  readonly #reader: {
    read(): Promise<{ done: boolean; value?: Uint8Array | undefined }>;
    cancel(): Promise<void>;
  };
  readonly #request: Request;

  constructor(request: Request, body: ReadableStream<Uint8Array>) {
    this.#request = request;
    this.#reader = body.getReader();
  }

  /** The next chunk, or undefined at the end; 408 past a deadline, 499 when the client left. */
  async next(): Promise<Uint8Array | undefined> {
    try {
      const { value, done } = await this.#clock.race(this.#reader.read(), true);
      return done ? undefined : value;
    } catch (thrown) {
      this.cancel();
      throw readFailure(this.#request, thrown);
    }
  }

  /** Stops reading (not awaited: a stalled client must not hold the answer). */
  cancel(): void {
    this.#reader.cancel().catch(() => undefined);
  }
}

/** A route handler that takes its request's body, already read under its cap. */
export type BodyHandler = (ctx: RequestContext, gateway: Gateway, raw: Uint8Array) => Promise<Response>;

/**
 * The route handler that reads the body under `cap` (the gateway's setting for the route: 413 while
 * reading, 408 when stalled) and then hands it to `handler`, so the edge reads a body before the
 * route's row runs and the row never comes back to the edge for it.
 */
export function withBody(cap: (gateway: Gateway) => number, handler: BodyHandler): Handler {
  return async (ctx, gateway) => {
    const raw = await readBody(ctx.request, cap(gateway));
    if (timeline !== undefined) timeline.stage(ctx, "body");
    return handler(ctx, gateway, raw);
  };
}

/**
 * The whole body, refusing it as soon as it passes `cap` bytes or a body timeout; a compressed
 * body (Content-Encoding) decoded, its decoded size under the same cap (src/request/encoding.ts).
 */
export async function readBody(request: Request, cap: number): Promise<Uint8Array> {
  const codings = contentCodings(request.headers);
  const bytes = await readRawBody(request, cap);
  return codings.length === 0 ? bytes : decodeBody(bytes, codings, cap);
}

/** The body's bytes as sent, refusing it as soon as it passes `cap` bytes or a body timeout. */
async function readRawBody(request: Request, cap: number): Promise<Uint8Array> {
  // NaN when the request declares no length (or one that is not a length).
  const declared = declaredLength(request, Number.NaN);
  const known = Number.isFinite(declared);
  if (known && declared > cap) throw tooLarge(cap);
  // A small declared length within the cap: the server frames the body by it, so it is read in one
  // native step (no stream reader and promise per chunk; `request.body` is not even touched, which
  // would make a stream). Only the total deadline applies there: a native read shows no progress.
  // Larger bodies are read chunk by chunk under both deadlines. Checked again in case the
  // declaration was wrong.
  if (known && declared > 0 && declared <= NATIVE_READ_BYTES) {
    const bytes = await readWhole(request);
    if (bytes.byteLength > cap) throw tooLarge(cap);
    return bytes;
  }
  if (request.body === null) return new Uint8Array(0);
  const body = known ? new CappedBuffer(cap, declared, declared) : new CappedBuffer(cap);
  const reader = new TimedReader(request, request.body);
  for (let chunk = await reader.next(); chunk !== undefined; chunk = await reader.next()) {
    if (!body.append(chunk)) {
      reader.cancel();
      throw tooLarge(cap);
    }
  }
  return body.bytes();
}

/** An image generation body is a prompt of at most 32000 characters plus a few fields: 1 MiB is ample. */
export const MAX_JSON_BYTES = 1024 * 1024;

/** Reads a JSON body under `cap` and parses it once (the images generation endpoint). */
export async function readJsonBody(request: Request, cap = MAX_JSON_BYTES): Promise<unknown> {
  return parseJson(await readBody(request, cap));
}
