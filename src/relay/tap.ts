// Reads usage off a relayed event stream without touching the bytes the client gets: only the
// events that carry usage are parsed; content deltas are only counted (the estimate used when an
// upstream never reports usage). Also notes whether the protocol's terminal event was seen.
import type { UsageCounts } from "../billing/meter.ts";
import { anthropicUsage, openaiUsage } from "../wire/text-usage.ts";
import type { TextProtocol } from "../wire/text-view.ts";

const RESPONSES_DELTAS = new Set([
  "response.output_text.delta",
  "response.function_call_arguments.delta",
  "response.reasoning_summary_text.delta",
  "response.reasoning_text.delta",
  "response.refusal.delta",
]);
const RESPONSES_TERMINAL = new Set(["response.completed", "response.incomplete", "response.failed", "error"]);

function parse(data: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(data);
    return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function field(object: unknown, key: string): unknown {
  return typeof object === "object" && object !== null ? (object as Record<string, unknown>)[key] : undefined;
}

export class UsageTap {
  readonly protocol: TextProtocol;
  /** Usage as the upstream reported it (undefined until a usage-bearing event arrives). */
  reported: UsageCounts | undefined;
  /** Content deltas seen: roughly one token each. */
  deltas = 0;
  /** Events seen (Responses: the next `sequence_number`). */
  events = 0;
  /** True once the protocol's last event (normal or error) went by. */
  terminal = false;
  /** Responses: the `response` of `response.created`, kept to build a `response.failed`. */
  created: Record<string, unknown> | undefined;

  constructor(protocol: TextProtocol) {
    this.protocol = protocol;
  }

  onEvent(name: string | undefined, data: string): void {
    this.events++;
    switch (this.protocol) {
      case "responses":
        this.#responses(name ?? /"type":"([^"]+)"/.exec(data)?.[1], data);
        break;
      case "chat":
        this.#chat(data);
        break;
      case "messages":
        this.#messages(name, data);
        break;
    }
  }

  #responses(type: string | undefined, data: string): void {
    if (type === undefined) return;
    if (RESPONSES_DELTAS.has(type)) this.deltas++;
    else if (type === "response.created") {
      const response = field(parse(data), "response");
      if (typeof response === "object" && response !== null)
        this.created = response as Record<string, unknown>;
    } else if (RESPONSES_TERMINAL.has(type)) {
      this.terminal = true;
      const usage = field(field(parse(data), "response"), "usage");
      this.reported = openaiUsage(usage) ?? this.reported;
    }
  }

  #chat(data: string): void {
    if (data === "[DONE]") {
      this.terminal = true;
      return;
    }
    if (data.includes('"usage":{')) this.reported = openaiUsage(field(parse(data), "usage")) ?? this.reported;
    else if (data.startsWith('{"error"')) this.terminal = true;
    else if (data.includes('"content":"') || data.includes('"arguments":"')) this.deltas++;
  }

  #messages(name: string | undefined, data: string): void {
    if (name === "content_block_delta") this.deltas++;
    else if (name === "message_start") this.#mergeAnthropic(field(field(parse(data), "message"), "usage"));
    else if (name === "message_delta") this.#mergeAnthropic(field(parse(data), "usage"));
    else if (name === "message_stop" || name === "error") this.terminal = true;
  }

  /** Anthropic usage arrives in parts: input in message_start, cumulative output in message_delta. */
  #mergeAnthropic(raw: unknown): void {
    const next = anthropicUsage(raw);
    if (next === undefined) return;
    const had = this.reported;
    const hasInput = typeof field(raw, "input_tokens") === "number";
    this.reported = {
      ...next,
      inputTokens: hasInput ? next.inputTokens : (had?.inputTokens ?? 0),
      cachedInputTokens: hasInput ? next.cachedInputTokens : (had?.cachedInputTokens ?? 0),
      cacheWrite5mTokens: hasInput ? next.cacheWrite5mTokens : (had?.cacheWrite5mTokens ?? 0),
      cacheWrite1hTokens: hasInput ? next.cacheWrite1hTokens : (had?.cacheWrite1hTokens ?? 0),
    };
  }

  /** The usage to settle: reported if any, else estimated from the prompt count and deltas seen. */
  usage(inputTokens: number): { usage: UsageCounts; source: "reported" | "estimated" } {
    if (this.reported) return { usage: this.reported, source: "reported" };
    return {
      usage: {
        inputTokens,
        cachedInputTokens: 0,
        cacheWrite5mTokens: 0,
        cacheWrite1hTokens: 0,
        outputTokens: this.deltas,
        reasoningTokens: 0,
        generations: 0,
      },
      source: "estimated",
    };
  }
}
