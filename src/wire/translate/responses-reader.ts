// Reading a Responses upstream's answer into the internal form: the complete response object,
// and its SSE events one at a time (stateful, nothing buffered beyond the item being streamed).
// Message items become text, reasoning items thinking (summary or reasoning text, with
// encrypted_content as the signature), function_call items tool calls; other item types (web
// search, custom tool calls, …) have no counterpart and are dropped.
import { stopFromResponses, usageFromOpenAI } from "./finish.ts";
import type { IrEvent, IrPart, IrPartStart, IrReply, ReplyReader } from "./ir.ts";
import { parseObject } from "./ir.ts";
import { arr, type Obj, obj, str } from "./narrow.ts";

function itemText(item: Obj): string {
  return arr(item.content)
    .map((c) => str(obj(c).text) ?? str(obj(c).refusal) ?? "")
    .join("");
}

function reasoningText(item: Obj): string {
  const summary = arr(item.summary).map((s) => str(obj(s).text) ?? "");
  const content = arr(item.content).map((s) => str(obj(s).text) ?? "");
  return (summary.length > 0 ? summary : content).join("\n\n");
}

function partOf(item: Obj): IrPart | undefined {
  switch (item.type) {
    case "message":
      return { type: "text", text: itemText(item) };
    case "reasoning":
      return { type: "thinking", text: reasoningText(item), signature: str(item.encrypted_content) };
    case "function_call":
      return {
        type: "tool_call",
        id: String(item.call_id),
        name: String(item.name),
        arguments: str(item.arguments) ?? "",
      };
    default:
      return undefined;
  }
}

/** A complete Responses answer in the internal form. */
export function readResponsesReply(json: Obj): IrReply {
  const parts = arr(json.output).flatMap((i) => partOf(obj(i)) ?? []);
  return {
    id: str(json.id) ?? "",
    model: str(json.model) ?? "",
    parts,
    stop: stopFromResponses(
      json,
      parts.some((p) => p.type === "tool_call"),
    ),
    stopSequence: undefined,
    usage: usageFromOpenAI(json.usage),
  };
}

function startOf(item: Obj): IrPartStart | undefined {
  if (item.type === "message") return { type: "text" };
  if (item.type === "reasoning") return { type: "thinking" };
  if (item.type === "function_call")
    return { type: "tool_call", id: String(item.call_id), name: String(item.name) };
  return undefined;
}

interface Open {
  index: number;
  /** Whether deltas were streamed (else the done item's content is sent whole). */
  streamed: boolean;
}

/** Reads a Responses SSE stream into internal events. */
export class ResponsesReader implements ReplyReader {
  readonly #open = new Map<number, Open>();
  #next = 0;
  #calledTool = false;
  #done = false;

  read(name: string | undefined, data: string): IrEvent[] {
    if (this.#done) return [];
    const e = parseObject(data);
    if (e === undefined) return [];
    const type = str(e.type) ?? name;
    switch (type) {
      case "response.created": {
        const r = obj(e.response);
        return [{ type: "start", id: str(r.id) ?? "", model: str(r.model) ?? "", usage: undefined }];
      }
      case "response.output_item.added":
        return this.#added(e);
      case "response.output_text.delta":
      case "response.refusal.delta":
        return this.#delta(e, (index, text) => ({ type: "text", index, text }));
      case "response.reasoning_summary_text.delta":
      case "response.reasoning_text.delta":
        return this.#delta(e, (index, text) => ({ type: "thinking", index, text }));
      case "response.function_call_arguments.delta":
        return this.#delta(e, (index, json) => ({ type: "arguments", index, json }));
      case "response.output_item.done":
        return this.#itemDone(e);
      case "response.completed":
      case "response.incomplete": {
        this.#done = true;
        const r = obj(e.response);
        const stop = stopFromResponses(r, this.#calledTool);
        return [{ type: "finish", stop, stopSequence: undefined, usage: usageFromOpenAI(r.usage) }];
      }
      case "response.failed":
      case "error": {
        this.#done = true;
        const err = obj(type === "error" ? (e.error ?? e) : obj(e.response).error);
        return [{ type: "error", message: str(err.message) ?? "The upstream reported a failure." }];
      }
      default:
        return [];
    }
  }

  #added(e: Obj): IrEvent[] {
    const start = startOf(obj(e.item));
    if (start === undefined) return [];
    const index = this.#next++;
    if (start.type === "tool_call") this.#calledTool = true;
    this.#open.set(Number(e.output_index), { index, streamed: false });
    return [{ type: "part_start", index, part: start }];
  }

  #delta(e: Obj, make: (index: number, text: string) => IrEvent): IrEvent[] {
    const open = this.#open.get(Number(e.output_index));
    const delta = str(e.delta);
    if (open === undefined || delta === undefined || delta === "") return [];
    open.streamed = true;
    return [make(open.index, delta)];
  }

  #itemDone(e: Obj): IrEvent[] {
    const open = this.#open.get(Number(e.output_index));
    if (open === undefined) return [];
    this.#open.delete(Number(e.output_index));
    const { index } = open;
    const part = partOf(obj(e.item));
    const out: IrEvent[] = [];
    if (part?.type === "text" && !open.streamed && part.text !== "")
      out.push({ type: "text", index, text: part.text });
    if (part?.type === "tool_call" && !open.streamed)
      out.push({ type: "arguments", index, json: part.arguments });
    if (part?.type === "thinking") {
      if (!open.streamed && part.text !== "") out.push({ type: "thinking", index, text: part.text });
      if (part.signature) out.push({ type: "signature", index, signature: part.signature });
    }
    out.push({ type: "part_stop", index });
    return out;
  }

  end(): IrEvent[] {
    return [];
  }
}
