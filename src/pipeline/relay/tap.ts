// Reads usage off a relayed event stream from events the relay has already parsed as SSE (one
// parse per stream). JSON.parse runs only on events that can carry usage or end the stream, chosen
// by event name or by a key test that does not depend on the JSON's whitespace; content deltas are
// only counted (the estimate when an upstream never reports usage). Also notes whether the stream
// is complete and, for Chat, whether an event is the usage-only chunk (empty `choices` + `usage`).
import type { UsageCounts } from "../../billing/meter.ts";
import type { TextProtocol } from "../../wire/text-form.ts";
import { anthropicUsage, openaiUsage } from "../../wire/text-usage.ts";

const RESPONSES_DELTAS = new Set([
  "response.output_text.delta",
  "response.function_call_arguments.delta",
  "response.reasoning_summary_text.delta",
  "response.reasoning_text.delta",
  "response.refusal.delta",
]);
const RESPONSES_TERMINAL = new Set(["response.completed", "response.incomplete", "response.failed", "error"]);

/**
 * An event's `type` when the server sent no `event:` line. Only the protocol's event types match,
 * so a nested item's `type` ("message", "text_delta", …) written first (sorted keys) is passed over.
 */
const RESPONSES_TYPE = /"type"\s*:\s*"(response\.[a-z_.]+|error)"/;
const MESSAGES_TYPE =
  /"type"\s*:\s*"(message_(?:start|delta|stop)|content_block_(?:start|delta|stop)|ping|error)"/;
// Chat chunks: a whitespace-free test for the common compact form first (native substring search,
// one character look), the whitespace-tolerant pattern only when that cannot decide. Inside JSON
// strings quotes are escaped, so model text can never look like one of these keys.
const USAGE_OBJECT = /"usage"\s*:\s*\{/;
/** OpenAI's `{"error": {…}}` and vLLM's `{"object": "error", …}`: anchored, so most chunks fail at once. */
const CHAT_ERROR = /^\s*\{\s*"(?:error"\s*:|object"\s*:\s*"error")/;
const FINISHED = /"finish_reason"\s*:\s*"/;
const TEXT_VALUE = /"(?:content|arguments|refusal|reasoning_content)"\s*:\s*"/;
const N = 110;

/** A usage object: not `"usage": null`, which OpenAI sends on every chunk when include_usage is on. */
function hasUsage(data: string): boolean {
  const at = data.indexOf('"usage"');
  return at !== -1 && data.charCodeAt(at + 8) !== N && USAGE_OBJECT.test(data);
}

/** A chunk carrying generated text or tool arguments: counted for the estimate. */
function chatText(data: string): boolean {
  if (data.includes('"content":"') || data.includes('"arguments":"')) return true;
  return data.includes('": ') && TEXT_VALUE.test(data);
}

type Json = Record<string, unknown>;

function parse(data: string): Json | undefined {
  try {
    const value: unknown = JSON.parse(data);
    return typeof value === "object" && value !== null ? (value as Json) : undefined;
  } catch {
    return undefined;
  }
}

function field(object: unknown, key: string): unknown {
  return typeof object === "object" && object !== null ? (object as Json)[key] : undefined;
}

export class UsageTap {
  readonly protocol: TextProtocol;
  /** Usage as the upstream reported it (undefined until a usage-bearing event arrives; last wins). */
  reported: UsageCounts | undefined;
  /** Content deltas seen: roughly one token each. */
  deltas = 0;
  /** Events seen (Responses: the next `sequence_number`). */
  events = 0;
  /** True once the protocol's last event (normal or error) went by. */
  terminal = false;
  /** Chat: the last two chunks' data (a finish chunk may be followed by the usage chunk). */
  #last: string | undefined;
  #beforeLast: string | undefined;
  /** Responses: the `response` of `response.created`, kept to build a `response.failed`. */
  created: Json | undefined;
  /** The upstream's own events, tapped before translation: their usage wins over this stream's. */
  readonly #source: UsageTap | undefined;
  /** Anthropic usage fields so far: message_start has input, message_delta the cumulative rest. */
  #anthropic: Json = {};
  /** Responses and Messages: why the answer ended, from the events already parsed for usage. */
  #finish: string | undefined;

  constructor(protocol: TextProtocol, source?: UsageTap) {
    this.protocol = protocol;
    this.#source = source;
  }

  /**
   * The stream reached a proper end: its terminal event, or (Chat) a choice finished in one of the
   * last two chunks (servers that close without `[DONE]`; the usage chunk may follow the finish).
   */
  get complete(): boolean {
    if (this.terminal) return true;
    if (this.protocol !== "chat") return false;
    return [this.#last, this.#beforeLast].some((d) => d !== undefined && FINISHED.test(d));
  }

  /**
   * Takes one parsed SSE event. Returns true when it is a Chat usage-only chunk (what the gateway
   * asked for with `stream_options.include_usage`), so the relay can drop it for a client that did not.
   */
  onEvent(name: string | undefined, data: string): boolean {
    this.events++;
    switch (this.protocol) {
      case "responses":
        this.#responses(name ?? RESPONSES_TYPE.exec(data)?.[1], data);
        return false;
      case "chat":
        return this.#chat(data);
      case "messages":
        this.#messages(name ?? MESSAGES_TYPE.exec(data)?.[1], data);
        return false;
    }
  }

  #responses(type: string | undefined, data: string): void {
    if (type === undefined) return;
    if (RESPONSES_DELTAS.has(type)) this.deltas++;
    else if (type === "response.created") {
      const response = field(parse(data), "response");
      if (typeof response === "object" && response !== null) this.created = response as Json;
    } else if (RESPONSES_TERMINAL.has(type)) {
      this.terminal = true;
      const response = field(parse(data), "response");
      this.reported = openaiUsage(field(response, "usage")) ?? this.reported;
      const reason = field(field(response, "incomplete_details"), "reason") ?? field(response, "status");
      if (typeof reason === "string") this.#finish = reason;
    }
  }

  #chat(data: string): boolean {
    if (data.length < 16 && data.trim() === "[DONE]") {
      this.terminal = true;
      return false;
    }
    // Whether the stream finished is only needed at its end: the last two chunks are kept for it.
    this.#beforeLast = this.#last;
    this.#last = data;
    if (chatText(data)) this.deltas++;
    const usage = hasUsage(data);
    if (!usage && !CHAT_ERROR.test(data)) return false;
    const chunk = parse(data);
    if (chunk === undefined) return false;
    const choices = chunk.choices;
    if (!Array.isArray(choices)) {
      if (chunk.error !== undefined || chunk.object === "error") this.terminal = true;
      return false;
    }
    const counts = usage ? openaiUsage(chunk.usage) : undefined;
    if (counts === undefined) return false;
    this.reported = counts;
    return choices.length === 0;
  }

  #messages(type: string | undefined, data: string): void {
    if (type === "content_block_delta") this.deltas++;
    else if (type === "message_start") this.#mergeAnthropic(field(field(parse(data), "message"), "usage"));
    else if (type === "message_delta") {
      const event = parse(data);
      this.#mergeAnthropic(field(event, "usage"));
      const stop = field(field(event, "delta"), "stop_reason");
      if (typeof stop === "string") this.#finish = stop;
    } else if (type === "message_stop" || type === "error") this.terminal = true;
  }

  /** Anthropic usage arrives in parts; a later event's fields replace earlier ones (all cumulative). */
  #mergeAnthropic(raw: unknown): void {
    if (typeof raw !== "object" || raw === null) return;
    const merged: Json = { ...this.#anthropic };
    for (const [key, value] of Object.entries(raw)) if (value !== null) merged[key] = value;
    this.#anthropic = merged;
    this.reported = anthropicUsage(merged) ?? this.reported;
  }

  /**
   * Why the answer ended (`gen_ai.response.finish_reasons`): Chat's choices' `finish_reason` in the
   * last two chunks (parsed only when asked), Messages' `stop_reason`, Responses' status or
   * incomplete reason.
   */
  finishReasons(): string[] {
    if (this.protocol !== "chat") return this.#finish === undefined ? [] : [this.#finish];
    const reasons: string[] = [];
    for (const data of [this.#beforeLast, this.#last]) {
      if (data === undefined || !FINISHED.test(data)) continue;
      const choices = parse(data)?.choices;
      if (!Array.isArray(choices)) continue;
      for (const choice of choices) {
        const reason = field(choice, "finish_reason");
        if (typeof reason === "string") reasons.push(reason);
      }
    }
    return reasons;
  }

  /** The usage to settle: reported if any, else estimated from the prompt count and deltas seen. */
  usage(inputTokens: number): { usage: UsageCounts; source: "reported" | "estimated" } {
    const reported = this.#source === undefined ? this.reported : this.#source.reported;
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
      },
      source: "estimated",
    };
  }
}
