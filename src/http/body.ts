// Reading a request body: under a size cap (413 before buffering more than the cap), within the
// body timeouts (408: idle between chunks and total), a closed client reported as such (never as
// an internal failure); and parsing it as JSON exactly once: valid UTF-8 only, nesting at most
// MAX_JSON_DEPTH deep (400 naming the problem).
import { GatewayError } from "../wire/errors.ts";

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

/** Accepted JSON bodies nest objects and arrays at most this deep (a documented limit). */
export const MAX_JSON_DEPTH = 128;

function tooLarge(cap: number): GatewayError {
  return new GatewayError(
    "too_large",
    `The request body is larger than ${cap} bytes, the most this endpoint reads. Shorten the input.`,
  );
}

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
  readonly #reader: { read(): Promise<{ done: boolean; value?: Uint8Array }>; cancel(): Promise<void> };
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

/** The whole body, refusing it as soon as it passes `cap` bytes or a body timeout. */
export async function readBody(request: Request, cap: number): Promise<Uint8Array> {
  const declared = Number(request.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > cap) throw tooLarge(cap);
  // A small declared length within the cap: the server frames the body by it, so it is read in one
  // native step (no stream reader and promise per chunk; `request.body` is not even touched, which
  // would make a stream). Only the total deadline applies there: a native read shows no progress.
  // Larger bodies are read chunk by chunk under both deadlines. Checked again in case the
  // declaration was wrong.
  if (Number.isFinite(declared) && declared > 0 && declared <= NATIVE_READ_BYTES) {
    const bytes = await readWhole(request);
    if (bytes.byteLength > cap) throw tooLarge(cap);
    return bytes;
  }
  if (request.body === null) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = new TimedReader(request, request.body);
  for (let chunk = await reader.next(); chunk !== undefined; chunk = await reader.next()) {
    size += chunk.byteLength;
    if (size > cap) {
      reader.cancel();
      throw tooLarge(cap);
    }
    chunks.push(chunk);
  }
  return chunks.length === 1 && chunks[0] ? chunks[0] : Buffer.concat(chunks);
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;

/** The index of the quote closing the string opened at `open`, or -1 when it never closes. */
function closingQuote(bytes: Uint8Array, open: number): number {
  let at = bytes.indexOf(QUOTE, open + 1);
  while (at !== -1) {
    let escapes = 0;
    while (bytes[at - 1 - escapes] === BACKSLASH) escapes++;
    if (escapes % 2 === 0) return at;
    at = bytes.indexOf(QUOTE, at + 1);
  }
  return -1;
}

/**
 * Whether the JSON text nests objects and arrays deeper than `limit`. Strings are skipped with a
 * native search, so this costs a few microseconds on a 20 KB body; malformed text is left to
 * the parser.
 */
export function nestsDeeperThan(bytes: Uint8Array, limit: number): boolean {
  if (bytes.byteLength <= limit) return false;
  let depth = 0;
  for (let i = 0; i < bytes.byteLength; i++) {
    const c = bytes[i];
    if (c === QUOTE) {
      i = closingQuote(bytes, i);
      if (i === -1) return false;
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > limit) return true;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) depth--;
  }
  return false;
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** The body as text; a byte sequence that is not UTF-8 is a 400 (never silently replaced). */
function utf8(bytes: Uint8Array): string {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    throw new GatewayError(
      "invalid_request",
      "The request body is not valid UTF-8. Encode the JSON as UTF-8 (RFC 8259 §8.1).",
    );
  }
}

/** Parses the body as JSON; empty, not UTF-8, too deep or malformed → 400 with the reason. */
export function parseJson(bytes: Uint8Array): unknown {
  if (bytes.byteLength === 0) {
    throw new GatewayError(
      "invalid_request",
      "The request body is empty: send a JSON object with Content-Type: application/json.",
    );
  }
  const text = utf8(bytes);
  if (nestsDeeperThan(bytes, MAX_JSON_DEPTH)) {
    throw new GatewayError(
      "invalid_request",
      `The request body nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep, the most this gateway accepts. Flatten the input.`,
    );
  }
  try {
    return JSON.parse(text);
  } catch (thrown) {
    const reason = thrown instanceof Error ? thrown.message : String(thrown);
    throw new GatewayError(
      "invalid_request",
      `The request body is not valid JSON (${reason}). Send a JSON object with Content-Type: application/json.`,
    );
  }
}

/** An image generation body is a prompt of at most 32000 characters plus a few fields: 1 MiB is ample. */
export const MAX_JSON_BYTES = 1024 * 1024;

/** Reads a JSON body under `cap` and parses it once (the images generation endpoint). */
export async function readJsonBody(request: Request, cap = MAX_JSON_BYTES): Promise<unknown> {
  return parseJson(await readBody(request, cap));
}
