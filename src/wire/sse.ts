// Server-sent events framing: encoding one event, the keep-alive comment, and finding where the
// last complete event ends in a chunk of bytes (so a relay forwards whole events only).

const encoder = new TextEncoder();

/** One SSE event: `event: NAME\ndata: JSON\n\n`, or data-only when `name` is undefined (Chat). */
export function sseEvent(name: string | undefined, data: string): Uint8Array {
  return encoder.encode(name === undefined ? `data: ${data}\n\n` : `event: ${name}\ndata: ${data}\n\n`);
}

/** A JSON payload as one SSE event. */
export function sseJson(name: string | undefined, data: unknown): Uint8Array {
  return sseEvent(name, JSON.stringify(data));
}

/** The comment line sent while the upstream is silent, so proxies and clients keep the socket. */
export const KEEP_ALIVE: Uint8Array = encoder.encode(": keep-alive\n\n");

/** Headers of every SSE answer; `X-Accel-Buffering: no` stops nginx-style proxies from buffering. */
export const SSE_HEADERS: Readonly<Record<string, string>> = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache",
  "x-accel-buffering": "no",
};

const LF = 10;
const CR = 13;

/**
 * The index just past the last blank line (event boundary) in `bytes`, or -1 when there is none.
 * `carry` is the last byte of the previous chunk, so a boundary split across chunks is found.
 */
export function lastEventEnd(bytes: Uint8Array, carry: number): number {
  for (let i = bytes.length - 1; i >= 0; i--) {
    if (bytes[i] !== LF) continue;
    let j = i - 1;
    if ((j >= 0 ? bytes[j] : carry) === CR) j--;
    const before = j >= 0 ? bytes[j] : j === -1 ? carry : -1;
    if (before === LF) return i + 1;
  }
  return -1;
}
