// Usage in the Responses protocol (channel kind "openai-responses"; the simulator speaks it too):
// the complete answer's `usage`, and a stream's terminal event (`response.completed`,
// `.incomplete`, `.failed`, `error`), the only events parsed; deltas are only counted (the
// estimate when an upstream never reports usage). The `response` of `response.created` is kept
// so a broken stream can end with a `response.failed` (src/pipeline/relay/failure.ts).
import type { UsageCounts } from "../../billing/meter.ts";
import { openaiUsage } from "../../wire/text-usage.ts";
import { readObject } from "../../wire/translate/convert.ts";
import { type Obj, obj } from "../../wire/translate/narrow.ts";
import { StreamUsage } from "../usage-reader.ts";

const DELTAS = new Set([
  "response.output_text.delta",
  "response.function_call_arguments.delta",
  "response.reasoning_summary_text.delta",
  "response.reasoning_text.delta",
  "response.refusal.delta",
]);
const TERMINAL = new Set(["response.completed", "response.incomplete", "response.failed", "error"]);

/**
 * An event's `type` when the server sent no `event:` line. Only the protocol's event types match,
 * so a nested item's `type` ("message", "text_delta", …) written first (sorted keys) is passed over.
 */
const EVENT_TYPE = /"type"\s*:\s*"(response\.[a-z_.]+|error)"/;

/** The usage of a complete Responses answer. */
export function responsesAnswerUsage(body: Obj): UsageCounts | undefined {
  return openaiUsage(body.usage);
}

export class ResponsesStreamUsage extends StreamUsage {
  override onEvent(name: string | undefined, data: string): boolean {
    const type = name ?? EVENT_TYPE.exec(data)?.[1];
    if (type === undefined) return false;
    if (DELTAS.has(type)) this.deltas++;
    else if (type === "response.created") {
      const event = readObject(data);
      const response = event.ok ? event.value.response : undefined;
      if (typeof response === "object" && response !== null) this.created = response as Obj;
    } else if (TERMINAL.has(type)) {
      this.terminal = true;
      const event = readObject(data);
      const response = obj(event.ok ? event.value.response : undefined);
      this.reported = openaiUsage(response.usage) ?? this.reported;
      const reason = obj(response.incomplete_details).reason ?? response.status;
      if (typeof reason === "string") this.finish = reason;
    }
    return false;
  }
}
