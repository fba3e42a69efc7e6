// Usage in the Responses protocol (channel kind "openai-responses"; the simulator speaks it too):
// the complete answer's `usage`, and a stream's terminal event (`response.completed`,
// `.incomplete`, `.failed`, `error`), the only events parsed; deltas are kept unparsed (what a
// stream that ends without a terminal usage is billed for: an `error` event carries none). The
// usage of a terminal `response` is final. The `response` of `response.created` is kept
// so a broken stream can end with a `response.failed` (its record's `failureEvents`).
// Hosted tool calls the upstream bills per call (OpenAI's usage has no count of them) are counted
// from the output items: `web_search_call`, `file_search_call` and `image_generation_call`, and
// the distinct containers of `code_interpreter_call` items (billed per container), in the complete answer's
// `output`, in a stream's `response.output_item.done` events (parsed only when one names such an
// item) and in the terminal event's `response.output`; the larger count per tool is billed, so an
// item seen in both is counted once.
import { openaiUsage } from "../../wire/text-usage.ts";
import { readObject } from "../../wire/translate/convert.ts";
import { type Obj, obj } from "../../wire/translate/narrow.ts";
import type { PricedTool, ToolCalls, UsageCounts } from "../../wire/usage-counts.ts";
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

/** The output item types of hosted tool calls priced per call, by the tool they bill. */
const TOOL_ITEMS: Readonly<Record<string, PricedTool>> = {
  web_search_call: "web_search",
  file_search_call: "file_search",
  image_generation_call: "image_generation",
  code_interpreter_call: "code_interpreter",
};

/** A cheap test before parsing an `output_item.done`: only priced hosted tool items are counted. */
const TOOL_ITEM = /"type"\s*:\s*"(?:web_search|file_search|image_generation|code_interpreter)_call"/;

/**
 * Counts the priced hosted tool calls among output items into `into`; code interpreter calls
 * count once per container not yet in `containers` (an item without one is its own container).
 */
function countItems(items: unknown, into: ToolCalls = {}, containers = new Set<string>()): ToolCalls {
  if (!Array.isArray(items)) return into;
  for (const item of items) {
    const record = obj(item);
    const tool = TOOL_ITEMS[String(record.type)];
    if (tool === "code_interpreter") {
      const container =
        typeof record.container_id === "string" ? record.container_id : `item:${String(record.id)}`;
      if (containers.has(container)) continue;
      containers.add(container);
    }
    if (tool !== undefined) into[tool] = (into[tool] ?? 0) + 1;
  }
  return into;
}

/** Per tool, the larger of two counts of the same calls (stream events and the final output). */
function larger(a: ToolCalls | undefined, b: ToolCalls): ToolCalls | undefined {
  const merged: ToolCalls = { ...a };
  for (const [tool, n] of Object.entries(b) as [PricedTool, number][])
    merged[tool] = Math.max(merged[tool] ?? 0, n);
  return Object.keys(merged).length > 0 ? merged : undefined;
}

/** Usage counts with the hosted tool calls added (unchanged when none). */
function withCalls(usage: UsageCounts | undefined, calls: ToolCalls | undefined): UsageCounts | undefined {
  return usage === undefined || calls === undefined ? usage : { ...usage, toolCalls: calls };
}

/** The usage of a complete Responses answer, its hosted tool calls counted from `output`. */
export function responsesAnswerUsage(body: Obj): UsageCounts | undefined {
  return withCalls(openaiUsage(body.usage), larger(undefined, countItems(body.output)));
}

export class ResponsesStreamUsage extends StreamUsage {
  /** Code interpreter containers already counted from this stream's items. */
  readonly #containers = new Set<string>();

  /** Every delta event carries its fragment in `delta` (text, reasoning, arguments, refusal). */
  protected override deltaText(event: Obj): string {
    return typeof event.delta === "string" ? event.delta : "";
  }

  override onEvent(name: string | undefined, data: string): boolean {
    const type = name ?? EVENT_TYPE.exec(data)?.[1];
    if (type === undefined) return false;
    if (DELTAS.has(type)) this.keep(data);
    else if (type === "response.output_item.done") {
      if (!TOOL_ITEM.test(data)) return false;
      const event = readObject(data);
      if (event.ok) this.toolCalls = countItems([event.value.item], { ...this.toolCalls }, this.#containers);
    } else if (type === "response.created") {
      const event = readObject(data);
      const response = event.ok ? event.value.response : undefined;
      if (typeof response === "object" && response !== null) this.created = response as Obj;
    } else if (TERMINAL.has(type)) {
      this.terminal = true;
      const event = readObject(data);
      const response = obj(event.ok ? event.value.response : undefined);
      this.toolCalls = larger(this.toolCalls, countItems(response.output));
      const usage = withCalls(openaiUsage(response.usage), this.toolCalls);
      if (usage !== undefined) {
        this.reported = usage;
        this.finalUsage();
      }
      const reason = obj(response.incomplete_details).reason ?? response.status;
      if (typeof reason === "string") this.finish = reason;
    }
    return false;
  }
}
