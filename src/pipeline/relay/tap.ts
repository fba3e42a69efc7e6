// The usage tap of a relayed stream: what the relay learns from the events it already parsed as
// SSE. A native stream's tap hands them to the usage reader the call stage bound to the answer
// (the answering kind's, src/upstream/<kind>/usage.ts), which parses JSON only for events that can
// carry usage or end the stream; a translated stream has its own tap (translated.ts). The tap adds
// what the relay needs around the reader: the event count and the estimate when nothing was
// reported.
import type { ToolCalls, UsageCounts } from "../../billing/meter.ts";
import type { StreamUsage } from "../../upstream/usage-reader.ts";
import type { TextProtocol } from "../../wire/text-form.ts";

/** What the stream relay (stream.ts, failure.ts) and the settlement read from a relayed stream. */
export interface StreamTap {
  /** The client's protocol (the broken stream's last event is written in it). */
  readonly protocol: TextProtocol;
  /** Events the client got (Responses: the next `sequence_number`). */
  readonly events: number;
  /** Responses: the `response` the client's `response.created` carried, to build a `response.failed`. */
  readonly created: Record<string, unknown> | undefined;
  /** The client's stream reached its proper end (its terminal event, normal or error). */
  readonly complete: boolean;
  /**
   * Takes one event the relay parsed. Returns true when it is a Chat usage-only chunk (what the
   * gateway asked for with `stream_options.include_usage`), so the relay can drop it for a client
   * that did not.
   */
  onEvent(name: string | undefined, data: string): boolean;
  /** Why the answer ended (`gen_ai.response.finish_reasons`). */
  finishReasons(): string[];
  /** The usage to settle: reported if any, else estimated from the prompt count and deltas seen. */
  usage(inputTokens: number): TappedUsage;
}

export interface TappedUsage {
  usage: UsageCounts;
  source: "reported" | "estimated";
}

/**
 * The estimate when an upstream reported no usage: the gateway's prompt count, one output token per
 * content delta seen, and the hosted tool calls the upstream ran (billed all the same).
 */
export function estimatedUsage(inputTokens: number, outputTokens = 0, toolCalls?: ToolCalls): UsageCounts {
  return {
    inputTokens,
    cachedInputTokens: 0,
    cacheWriteTokens: 0,
    cacheWrite1hTokens: 0,
    outputTokens,
    reasoningTokens: 0,
    generations: 0,
    toolCalls,
  };
}

/** A stream's usage as its reader read it: reported if any, else the estimate. */
export function readUsage(reader: StreamUsage, inputTokens: number): TappedUsage {
  const reported = reader.reported;
  if (reported) return { usage: reported, source: "reported" };
  return { usage: estimatedUsage(inputTokens, reader.deltas, reader.toolCalls), source: "estimated" };
}

/** The tap of a native stream: the client gets the upstream's own events, read by its reader. */
export class UsageTap implements StreamTap {
  readonly protocol: TextProtocol;
  events = 0;
  readonly #reader: StreamUsage;

  constructor(protocol: TextProtocol, reader: StreamUsage) {
    this.protocol = protocol;
    this.#reader = reader;
  }

  /** Usage as the upstream reported it (undefined until a usage-bearing event arrives; last wins). */
  get reported(): UsageCounts | undefined {
    return this.#reader.reported;
  }

  /** Content deltas seen: roughly one token each. */
  get deltas(): number {
    return this.#reader.deltas;
  }

  /** True once the protocol's last event (normal or error) went by. */
  get terminal(): boolean {
    return this.#reader.terminal;
  }

  get created(): Record<string, unknown> | undefined {
    return this.#reader.created;
  }

  /**
   * The stream reached a proper end: its terminal event, or (Chat) a choice finished in one of the
   * last two chunks (servers that close without `[DONE]`; the usage chunk may follow the finish).
   */
  get complete(): boolean {
    return this.#reader.complete();
  }

  onEvent(name: string | undefined, data: string): boolean {
    this.events++;
    return this.#reader.onEvent(name, data);
  }

  finishReasons(): string[] {
    return this.#reader.finishReasons();
  }

  usage(inputTokens: number): TappedUsage {
    return readUsage(this.#reader, inputTokens);
  }
}
