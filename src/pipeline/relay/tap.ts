// The usage tap of a relayed stream: the events the relay already parsed as SSE go to the usage
// reader of the protocol the upstream speaks (src/upstream/usage.ts, one per kind folder), which
// parses JSON only for events that can carry usage or end the stream. The tap adds what the relay
// needs around it: the event count, a translated stream's usage taken from the upstream's own
// events, and the estimate when nothing was reported.
import type { UsageCounts } from "../../billing/meter.ts";
import { streamUsage } from "../../upstream/usage.ts";
import type { StreamUsage } from "../../upstream/usage-reader.ts";
import type { TextProtocol } from "../../wire/text-form.ts";

export class UsageTap {
  readonly protocol: TextProtocol;
  /** Events seen (Responses: the next `sequence_number`). */
  events = 0;
  readonly #reader: StreamUsage;
  /** The upstream's own events, tapped before translation: their usage wins over this stream's. */
  readonly #source: UsageTap | undefined;

  constructor(protocol: TextProtocol, source?: UsageTap) {
    this.protocol = protocol;
    this.#reader = streamUsage(protocol);
    this.#source = source;
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

  /** Responses: the `response` of `response.created`, kept to build a `response.failed`. */
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

  /**
   * Takes one parsed SSE event. Returns true when it is a Chat usage-only chunk (what the gateway
   * asked for with `stream_options.include_usage`), so the relay can drop it for a client that did not.
   */
  onEvent(name: string | undefined, data: string): boolean {
    this.events++;
    return this.#reader.onEvent(name, data);
  }

  /** Why the answer ended (`gen_ai.response.finish_reasons`). */
  finishReasons(): string[] {
    return this.#reader.finishReasons();
  }

  /** The usage to settle: reported if any, else estimated from the prompt count and deltas seen. */
  usage(inputTokens: number): { usage: UsageCounts; source: "reported" | "estimated" } {
    const upstream = this.#source ?? this;
    const reported = upstream.reported;
    if (reported) return { usage: reported, source: "reported" };
    return {
      usage: {
        inputTokens,
        cachedInputTokens: 0,
        cacheWriteTokens: 0,
        cacheWrite1hTokens: 0,
        outputTokens: this.deltas,
        reasoningTokens: 0,
        generations: 0,
        // Hosted tool calls the upstream ran before the stream broke are billed all the same.
        toolCalls: upstream.#reader.toolCalls,
      },
      source: "estimated",
    };
  }
}
