// What every protocol's stream usage reader offers the relay's tap (the readers:
// src/protocols/<name>/usage.ts, each its record's `usage.stream`). A leaf the records share.
//
// Besides the usage the upstream reports, a reader keeps what the upstream delivered — the raw data of
// each content delta (text, reasoning, tool arguments) — so a stream that ends before the upstream's
// final usage can be billed for it (the relay counts it, src/pipeline/relay/tap.ts). Keeping is one
// array push per delta (measured: Messages reader 8.5 → 15.9 ns a delta, min of 12 rounds); the
// deltas are parsed for their text only when the stream ends without its final usage, or once they
// hold more than KEPT_CHARS (then all of them, ~0.3–0.9 µs a delta): a stream keeps at most that
// much of its events, plus its text, and most answers stay under it and never pay a parse. The bound
// is memory per open stream (a thousand long streams hold at most ~0.5 GB of unread events).
import { readObject } from "../wire/translate/convert.ts";
import type { Obj } from "../wire/translate/narrow.ts";
import type { ToolCalls, UsageCounts } from "../wire/usage-counts.ts";

/** The most characters of unread delta events a reader holds before reading their text. */
export const KEPT_CHARS = 256 * 1024;

/**
 * A stream's usage reader: fed every event the relay parsed as SSE (one parse per stream), it
 * parses JSON only for events that can carry usage or end the stream, and keeps content deltas.
 * Each kind's reader extends this with its own `onEvent` and `deltaText`.
 */
export abstract class StreamUsage {
  /**
   * Usage as the upstream reported it so far (undefined until a usage-bearing event; last wins).
   * Final only once `final` is true: before that it is a floor (Anthropic's `message_start`, a
   * running count), never the bill.
   */
  reported: UsageCounts | undefined;
  /** True once the upstream's final usage went by: `reported` is then what the upstream bills. */
  final = false;
  /** Content deltas seen. */
  deltas = 0;
  /**
   * Hosted tool calls seen so far, kept apart from `reported` so a stream that breaks before its
   * usage still bills the calls the upstream ran (the estimate carries them).
   */
  toolCalls: ToolCalls | undefined;
  /** True once the protocol's last event (normal or error) went by. */
  terminal = false;
  /** Responses: the `response` of `response.created`, kept to build a `response.failed`. */
  created: Record<string, unknown> | undefined;
  /** Why the answer ended, when the protocol says it in an event already parsed for usage. */
  protected finish: string | undefined;
  /** Delta events' data not yet read for their text. */
  #unread: string[] = [];
  #unreadChars = 0;
  /** Text read from earlier deltas, one string per batch. */
  #text: string[] = [];

  /** Takes one event; true when it is a Chat usage-only chunk the client did not ask for. */
  abstract onEvent(name: string | undefined, data: string): boolean;

  /** The generated text one parsed delta event carries (text, reasoning, tool arguments). */
  protected abstract deltaText(event: Obj): string;

  /** Keeps one content delta's data (counted; read for its text only when needed). */
  protected keep(data: string): void {
    this.deltas++;
    if (this.final) return;
    this.#unread.push(data);
    this.#unreadChars += data.length;
    if (this.#unreadChars > KEPT_CHARS) this.#readKept();
  }

  /** The upstream's final usage went by: what was kept will not be needed. */
  protected finalUsage(): void {
    this.final = true;
    this.#unread = [];
    this.#unreadChars = 0;
    this.#text = [];
  }

  #readKept(): void {
    if (this.#unread.length === 0) return;
    const parts: string[] = [];
    for (const data of this.#unread) {
      const event = readObject(data);
      if (event.ok) parts.push(this.deltaText(event.value));
    }
    this.#text.push(parts.join(""));
    this.#unread = [];
    this.#unreadChars = 0;
  }

  /** What the upstream delivered before the final usage: every content delta's text, in order. */
  delivered(): string {
    this.#readKept();
    return this.#text.join("");
  }

  /** The stream reached a proper end: its terminal event went by. */
  complete(): boolean {
    return this.terminal;
  }

  /** Why the answer ended (`gen_ai.response.finish_reasons`). */
  finishReasons(): string[] {
    return this.finish === undefined ? [] : [this.finish];
  }
}
