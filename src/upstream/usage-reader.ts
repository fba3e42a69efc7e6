// What every kind's stream usage reader offers the relay's tap (the readers: src/upstream/<kind>/usage.ts,
// chosen in usage.ts). A leaf, so the kind folders and the dispatch need not import each other.
import type { ToolCalls, UsageCounts } from "../billing/meter.ts";

/**
 * A stream's usage reader: fed every event the relay parsed as SSE (one parse per stream), it
 * parses JSON only for events that can carry usage or end the stream, and counts content deltas.
 * Each kind's reader extends this with its own `onEvent`.
 */
export abstract class StreamUsage {
  /** Usage as the upstream reported it (undefined until a usage-bearing event; last wins). */
  reported: UsageCounts | undefined;
  /** Content deltas seen: roughly one token each (the estimate when nothing is reported). */
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

  /** Takes one event; true when it is a Chat usage-only chunk the client did not ask for. */
  abstract onEvent(name: string | undefined, data: string): boolean;

  /** The stream reached a proper end: its terminal event went by. */
  complete(): boolean {
    return this.terminal;
  }

  /** Why the answer ended (`gen_ai.response.finish_reasons`). */
  finishReasons(): string[] {
    return this.finish === undefined ? [] : [this.finish];
  }
}
