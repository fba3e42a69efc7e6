// Usage in the Messages protocol (channel kind "anthropic"; the simulator speaks it too): the
// complete answer's `usage`, and in a stream `message_start` (input) merged with `message_delta`
// (the cumulative rest), the only events parsed. `message_start`'s `output_tokens` (1) is
// provisional: only `message_delta`'s usage is final, so a stream cut before it is billed what its
// content deltas delivered (kept unparsed: text, thinking and tool-input JSON), at least that
// provisional figure. The input figures of `message_start` are final. The server tools Anthropic ran
// and bills per call are in the same usage (`server_tool_use`, cumulative like the rest), read by
// anthropicUsage.
import { anthropicUsage } from "../../wire/text-usage.ts";
import { readObject } from "../../wire/translate/convert.ts";
import { type Obj, obj, str } from "../../wire/translate/narrow.ts";
import type { UsageCounts } from "../../wire/usage-counts.ts";
import { StreamUsage } from "../usage-reader.ts";

/** An event's `type` when the server sent no `event:` line (only the protocol's own types match). */
const EVENT_TYPE =
  /"type"\s*:\s*"(message_(?:start|delta|stop)|content_block_(?:start|delta|stop)|ping|error)"/;

/** The usage of a complete Messages answer. */
export function messagesAnswerUsage(body: Obj): UsageCounts | undefined {
  return anthropicUsage(body.usage);
}

export class MessagesStreamUsage extends StreamUsage {
  /** Usage fields so far: message_start has input, message_delta the cumulative rest. */
  #usage: Obj = {};

  override onEvent(name: string | undefined, data: string): boolean {
    const type = name ?? EVENT_TYPE.exec(data)?.[1];
    if (type === "content_block_delta") this.keep(data);
    else if (type === "message_start") {
      const event = readObject(data);
      this.#merge(obj(event.ok ? event.value.message : undefined).usage);
    } else if (type === "message_delta") {
      const event = readObject(data);
      const value = event.ok ? event.value : {};
      this.#merge(value.usage);
      if (typeof value.usage === "object" && value.usage !== null) this.finalUsage();
      const stop = obj(value.delta).stop_reason;
      if (typeof stop === "string") this.finish = stop;
    } else if (type === "message_stop" || type === "error") this.terminal = true;
    return false;
  }

  /** A delta's text: `text_delta`, `thinking_delta`, or `input_json_delta` (a signature is not output). */
  protected override deltaText(event: Obj): string {
    const delta = obj(event.delta);
    return str(delta.text) ?? str(delta.thinking) ?? str(delta.partial_json) ?? "";
  }

  /** A later event's fields replace earlier ones (all cumulative). */
  #merge(raw: unknown): void {
    if (typeof raw !== "object" || raw === null) return;
    const merged: Obj = { ...this.#usage };
    for (const [key, value] of Object.entries(raw)) if (value !== null) merged[key] = value;
    this.#usage = merged;
    this.reported = anthropicUsage(merged) ?? this.reported;
    this.toolCalls = this.reported?.toolCalls;
  }
}
