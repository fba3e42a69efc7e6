// Usage in the Messages protocol (channel kind "anthropic"; the simulator speaks it too): the
// complete answer's `usage`, and in a stream `message_start` (input) merged with `message_delta`
// (the cumulative rest), the only events parsed; content deltas are only counted (the estimate
// when an upstream never reports usage). The server tools Anthropic ran and bills per call are in
// the same usage (`server_tool_use`, cumulative like the rest), read by anthropicUsage.
import type { UsageCounts } from "../../billing/meter.ts";
import { anthropicUsage } from "../../wire/text-usage.ts";
import { readObject } from "../../wire/translate/convert.ts";
import { type Obj, obj } from "../../wire/translate/narrow.ts";
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
    if (type === "content_block_delta") this.deltas++;
    else if (type === "message_start") {
      const event = readObject(data);
      this.#merge(obj(event.ok ? event.value.message : undefined).usage);
    } else if (type === "message_delta") {
      const event = readObject(data);
      const value = event.ok ? event.value : {};
      this.#merge(value.usage);
      const stop = obj(value.delta).stop_reason;
      if (typeof stop === "string") this.finish = stop;
    } else if (type === "message_stop" || type === "error") this.terminal = true;
    return false;
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
