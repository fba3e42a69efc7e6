// Server-sent events framing: encoding one event, the keep-alive comment, and finding where events
// end in a byte stream of any line-end dialect (so a relay forwards whole events only).
import { createParser, type EventSourceParser } from "eventsource-parser";

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
 * Finds where events end in a byte stream, whatever the line ends (CRLF, LF or CR, mixed, and a
 * CRLF cut between two chunks): an event ends after a line terminator that closes an empty line.
 * Stateful across `scan` calls, so each byte is looked at once. Works on bytes because CR and LF
 * never occur inside a multi-byte UTF-8 character: everything before an event end decodes whole.
 */
export class EventSplitter {
  /** The current line has no bytes yet (true at the start: a leading blank line ends nothing). */
  #lineEmpty = true;
  /** The previous byte was a CR, so an LF right after it is part of the same terminator. */
  #afterCr = false;
  readonly #ends: number[] = [];

  /**
   * The index just past the last event end in `chunk`, or -1. A chunk that ends with a blank line
   * (`\n\n`, `\n\r\n`, `\r\r`: the usual one event per chunk) is decided from its last bytes.
   */
  lastEnd(chunk: Uint8Array): number {
    const n = chunk.length;
    const last = chunk[n - 1];
    const before = chunk[n - 2];
    // The last terminator closes an empty line whatever came before these bytes.
    if (
      (last === LF && (before === LF || (before === CR && chunk[n - 3] === LF))) ||
      (last === CR && before === CR)
    ) {
      this.#lineEmpty = true;
      this.#afterCr = last === CR;
      return n;
    }
    this.#ends.length = 0;
    return this.scan(chunk, this.#ends).at(-1) ?? -1;
  }

  /**
   * Appends to `ends` the index just past each event end in `chunk` (a CRLF's LF included) and
   * returns `ends`. Pass a reused array to avoid an allocation per chunk.
   */
  scan(chunk: Uint8Array, ends: number[]): number[] {
    let nextCr = chunk.indexOf(CR);
    let i = 0;
    while (i < chunk.length) {
      let nextLf = chunk.indexOf(LF, i);
      if (nextCr !== -1 && nextCr < i) nextCr = chunk.indexOf(CR, i);
      if (nextLf === -1) nextLf = chunk.length;
      const t = nextCr !== -1 && nextCr < nextLf ? nextCr : nextLf;
      if (t > i) {
        this.#lineEmpty = false;
        this.#afterCr = false;
      }
      if (t === chunk.length) break;
      if (chunk[t] === LF && this.#afterCr) {
        // The LF of a CRLF: the terminator was counted at its CR; an event end moves past the LF.
        if (ends.length > 0 && ends[ends.length - 1] === t) ends[ends.length - 1] = t + 1;
      } else if (this.#lineEmpty) ends.push(t + 1);
      else this.#lineEmpty = true;
      this.#afterCr = chunk[t] === CR;
      i = t + 1;
    }
    return ends;
  }
}

/**
 * Feeds text to an eventsource-parser parser so a CR that ends a piece ends its line at once (the
 * parser otherwise holds it, waiting for a possible LF, and a CR-framed event would wait for the
 * next chunk); the LF of a CRLF cut between two pieces is then skipped. `end()` dispatches a last
 * event whose blank line never came (servers that close right after `data: [DONE]`).
 */
export class SseFeed {
  readonly #parser: EventSourceParser;
  #skipLf = false;

  constructor(parser: EventSourceParser) {
    this.#parser = parser;
  }

  feed(text: string): void {
    const piece = this.#skipLf && text.charCodeAt(0) === LF ? text.slice(1) : text;
    this.#skipLf = piece.charCodeAt(piece.length - 1) === CR;
    this.#parser.feed(this.#skipLf ? `${piece}\n` : piece);
  }

  end(): void {
    this.#parser.feed("\n\n");
  }
}

/**
 * The byte range of the `index`-th event (blocks without data, such as comments, do not count)
 * in `region`, a run of whole events. Splits and parses again, so the relay calls it only for the
 * rare region holding an event it must leave out.
 */
export function eventSpan(region: Uint8Array, index: number): [number, number] | undefined {
  const decoder = new TextDecoder();
  let events = 0;
  const feed = new SseFeed(
    createParser({
      onEvent: () => {
        events++;
      },
    }),
  );
  let start = 0;
  for (const end of new EventSplitter().scan(region, [])) {
    const before = events;
    feed.feed(decoder.decode(region.subarray(start, end)));
    if (before === index && events > index) return [start, end];
    start = end;
  }
  return undefined;
}
