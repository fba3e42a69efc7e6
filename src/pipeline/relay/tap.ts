// The usage tap of a relayed stream: what the relay learns from the events it already parsed as
// SSE. A native stream's tap hands them to the usage reader the call stage bound to the answer
// (the record's of the protocol the upstream spoke, src/protocols/<name>/usage.ts), which parses JSON only for events that can
// carry usage or end the stream; a translated stream has its own tap (translated.ts). The tap adds
// what the relay needs around the reader: the event count, and the count of what was delivered
// when the stream ended before the upstream's final usage.
import { countTokens } from "../../catalog/tokenizer.ts";
import type { StreamUsage } from "../../protocols/usage-reader.ts";
import type { TextProtocol } from "../../wire/text-form.ts";
import type { ToolCalls, UsageCounts } from "../../wire/usage-counts.ts";

/** What the stream relay (stream.ts, its failure events) and the settlement read from a relayed stream. */
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
   * False when the tap reads none of the client's events (it knows them from elsewhere, and counts
   * them itself): the relay then writes the bytes without parsing them as SSE.
   */
  readonly readsEvents?: boolean;
  /**
   * Takes one event the relay parsed. Returns true when it is a Chat usage-only chunk (what the
   * gateway asked for with `stream_options.include_usage`), so the relay can drop it for a client
   * that did not.
   */
  onEvent(name: string | undefined, data: string): boolean;
  /** Why the answer ended (`gen_ai.response.finish_reasons`). */
  finishReasons(): string[];
  /**
   * The usage to settle: the upstream's final usage, else what was delivered (readUsage).
   * `inputTokens` is the gateway's count of the prompt, `outputCap` the output the reservation covers.
   */
  usage(inputTokens: number, outputCap: number): TappedUsage;
}

export interface TappedUsage {
  usage: UsageCounts;
  source: "reported" | "counted";
}

/**
 * Usage the gateway puts together itself: the prompt count, `outputTokens`, and the hosted tool
 * calls the upstream ran (billed all the same).
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

/** The output tokens of `text` the upstream generated, never above `outputCap` (the upstream cannot have produced more). */
export function countedOutput(text: string, outputCap: number): number {
  return Math.min(countTokens(text), outputCap);
}

/**
 * A stream's usage as its reader read it. The upstream's final usage is billed as it is. A stream
 * that ended before it (cut by the client, dropped by the upstream, ended by an error, or from an
 * upstream that never reports usage) is billed for what the upstream delivered, counted by the
 * gateway's tokenizer (never above `outputCap`, what the reservation covers: the upstream cannot
 * have produced more), and never below a provisional figure it sent (Anthropic's `message_start`,
 * a running count). Input is the provisional figure when there is one (final for input: the prompt
 * is read before the first token), else the gateway's count of the prompt.
 */
export function readUsage(reader: StreamUsage, inputTokens: number, outputCap: number): TappedUsage {
  const reported = reader.reported;
  if (reported !== undefined && reader.final) return { usage: reported, source: "reported" };
  const delivered = countedOutput(reader.delivered(), outputCap);
  const floor = reported ?? estimatedUsage(inputTokens);
  const usage: UsageCounts = {
    ...floor,
    outputTokens: Math.max(floor.outputTokens, delivered),
    toolCalls: reader.toolCalls,
  };
  return { usage, source: "counted" };
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

  /** Content deltas seen. */
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

  usage(inputTokens: number, outputCap: number): TappedUsage {
    return readUsage(this.#reader, inputTokens, outputCap);
  }
}
