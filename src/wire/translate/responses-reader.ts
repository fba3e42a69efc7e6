// Reading a Responses upstream's answer into the internal form: the complete response object,
// and its SSE events one at a time (stateful, nothing buffered beyond the item being streamed).
// Message items give one part per content part (`output_text` → text, `refusal` → refusal);
// function_call items tool calls; reasoning items thinking (summary or reasoning text, with
// encrypted_content, sealed with the item's id, as the signature) — or redacted thinking when the item has no readable text,
// only encrypted_content (the meaning of Anthropic's redacted_thinking). A streamed reasoning item
// therefore starts its part at its first text or, without text, when it is done. Other item
// types (web search, custom tool calls, …) have no counterpart and are dropped.

import type { IrEvent, IrPartStart, IrReply, IrReplyPart } from "../text-form.ts";
import { JsonReplyReader } from "./convert.ts";
import { stopFromResponses, usageFromOpenAI } from "./finish.ts";
import { arr, count, type Obj, obj, str } from "./narrow.ts";
import { sealReasoning } from "./reasoning-seal.ts";
import { lacking, lackingEvent, ResponsesFunctionCall } from "./reply-check.ts";

/** A message content part as a reply part (undefined for other or empty parts). */
function contentOf(raw: unknown): Extract<IrReplyPart, { type: "text" | "refusal" }> | undefined {
  const c = obj(raw);
  if (c.type === "refusal") return { type: "refusal", text: str(c.refusal) ?? "" };
  const text = str(c.text);
  return text === undefined || text === "" ? undefined : { type: "text", text };
}

function reasoningText(item: Obj): string {
  const summary = arr(item.summary).map((s) => str(obj(s).text) ?? "");
  const content = arr(item.content).map((s) => str(obj(s).text) ?? "");
  return (summary.length > 0 ? summary : content).join("\n\n");
}

/** A reasoning item as thinking, redacted thinking (no text, only encrypted content), or nothing. */
function reasoningOf(item: Obj): IrReplyPart | undefined {
  const text = reasoningText(item);
  const signature = sealReasoning(str(item.id), str(item.encrypted_content));
  if (text !== "") return { type: "thinking", text, signature };
  return signature ? { type: "redacted_thinking", data: signature } : undefined;
}

function partsOf(item: Obj): IrReplyPart[] {
  switch (item.type) {
    case "message":
      return arr(item.content).flatMap((c) => contentOf(c) ?? []);
    case "reasoning": {
      const part = reasoningOf(item);
      return part === undefined ? [] : [part];
    }
    case "function_call":
      return [
        {
          type: "tool_call",
          id: str(item.call_id) ?? "",
          name: str(item.name) ?? "",
          arguments: str(item.arguments) ?? "",
        },
      ];
    default:
      return [];
  }
}

/** A complete Responses answer in the internal form. */
export function readResponsesReply(json: Obj): IrReply {
  const parts = arr(json.output).flatMap((i) => partsOf(obj(i)));
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

/** An output item being streamed. `part` is the internal part open for it, if any. */
interface OpenItem {
  type: "message" | "reasoning" | "function_call";
  part: { index: number; type: IrPartStart["type"]; streamed: boolean; content: number } | undefined;
  /** Content parts of a message already read (so output_item.done does not repeat them). */
  contentDone: Set<number>;
  /** Reasoning: the summary index of the last delta (a new one is separated by a blank line). */
  summary: number;
}

/** Reads a Responses SSE stream into internal events. */
export class ResponsesReader extends JsonReplyReader {
  readonly #items = new Map<number, OpenItem>();
  #next = 0;
  #calledTool = false;
  protected event(name: string | undefined, e: Obj): IrEvent[] {
    const type = str(e.type) ?? name;
    switch (type) {
      case "response.created": {
        const r = obj(e.response);
        return [{ type: "start", id: str(r.id) ?? "", model: str(r.model) ?? "", usage: undefined }];
      }
      case "response.output_item.added":
        return this.#added(e);
      case "response.content_part.added":
        return this.#contentAdded(e);
      case "response.output_text.delta":
        return this.#contentDelta(e, "text");
      case "response.refusal.delta":
        return this.#contentDelta(e, "refusal");
      case "response.content_part.done":
        return this.#contentDone(e);
      case "response.reasoning_summary_text.delta":
      case "response.reasoning_text.delta":
        return this.#reasoningDelta(e);
      case "response.function_call_arguments.delta":
        return this.#argumentsDelta(e);
      case "response.output_item.done":
        return this.#itemDone(e);
      case "response.completed":
      case "response.incomplete": {
        this.done = true;
        const r = obj(e.response);
        const stop = stopFromResponses(r, this.#calledTool);
        return [{ type: "finish", stop, stopSequence: undefined, usage: usageFromOpenAI(r.usage) }];
      }
      case "response.failed":
      case "error": {
        this.done = true;
        const err = obj(type === "error" ? (e.error ?? e) : obj(e.response).error);
        return [{ type: "error", message: str(err.message) ?? "The upstream reported a failure." }];
      }
      default:
        return [];
    }
  }

  #item(e: Obj): OpenItem | undefined {
    return this.#items.get(count(e.output_index));
  }

  #open(out: IrEvent[], item: OpenItem, part: IrPartStart, content = 0): number {
    this.#close(out, item);
    const index = this.#next++;
    item.part = { index, type: part.type, streamed: false, content };
    out.push({ type: "part_start", index, part });
    return index;
  }

  #close(out: IrEvent[], item: OpenItem): void {
    if (item.part === undefined) return;
    out.push({ type: "part_stop", index: item.part.index });
    if (item.type === "message") item.contentDone.add(item.part.content);
    item.part = undefined;
  }

  #added(e: Obj): IrEvent[] {
    const raw = obj(e.item);
    if (raw.type !== "message" && raw.type !== "reasoning" && raw.type !== "function_call") return [];
    const item: OpenItem = { type: raw.type, part: undefined, contentDone: new Set(), summary: 0 };
    this.#items.set(count(e.output_index), item);
    if (raw.type !== "function_call") return [];
    const missing = lacking(ResponsesFunctionCall, raw, "item");
    if (missing !== undefined) {
      this.done = true;
      return [lackingEvent("Responses", missing)];
    }
    this.#calledTool = true;
    const out: IrEvent[] = [];
    this.#open(out, item, { type: "tool_call", id: str(raw.call_id) ?? "", name: str(raw.name) ?? "" });
    return out;
  }

  #contentAdded(e: Obj): IrEvent[] {
    const item = this.#item(e);
    if (item?.type !== "message") return [];
    const out: IrEvent[] = [];
    const type = obj(e.part).type === "refusal" ? "refusal" : "text";
    this.#open(out, item, { type }, count(e.content_index));
    return out;
  }

  #contentDelta(e: Obj, type: "text" | "refusal"): IrEvent[] {
    const item = this.#item(e);
    const delta = str(e.delta);
    if (item?.type !== "message" || delta === undefined || delta === "") return [];
    const out: IrEvent[] = [];
    const content = count(e.content_index);
    // Servers that skip content_part.added still get a part for their deltas.
    if (item.part?.content !== content || item.part.type !== type) this.#open(out, item, { type }, content);
    const part = item.part as NonNullable<OpenItem["part"]>;
    part.streamed = true;
    out.push({ type: "text", index: part.index, text: delta });
    return out;
  }

  #contentDone(e: Obj): IrEvent[] {
    const item = this.#item(e);
    if (item?.type !== "message") return [];
    const out: IrEvent[] = [];
    const content = count(e.content_index);
    const part = contentOf(e.part);
    if (item.part?.content !== content) {
      if (item.contentDone.has(content) || part === undefined) return [];
      this.#open(out, item, { type: part.type }, content);
    }
    const open = item.part as NonNullable<OpenItem["part"]>;
    if (!open.streamed && part !== undefined && part.text !== "")
      out.push({ type: "text", index: open.index, text: part.text });
    this.#close(out, item);
    return out;
  }

  #reasoningDelta(e: Obj): IrEvent[] {
    const item = this.#item(e);
    const delta = str(e.delta);
    if (item?.type !== "reasoning" || delta === undefined || delta === "") return [];
    const out: IrEvent[] = [];
    const summary = count(e.summary_index);
    let text = delta;
    if (item.part === undefined) this.#open(out, item, { type: "thinking" });
    else if (summary !== item.summary) text = `\n\n${delta}`;
    item.summary = summary;
    const part = item.part as NonNullable<OpenItem["part"]>;
    part.streamed = true;
    out.push({ type: "thinking", index: part.index, text });
    return out;
  }

  #argumentsDelta(e: Obj): IrEvent[] {
    const part = this.#item(e)?.part;
    const delta = str(e.delta);
    if (part?.type !== "tool_call" || delta === undefined || delta === "") return [];
    part.streamed = true;
    return [{ type: "arguments", index: part.index, json: delta }];
  }

  #itemDone(e: Obj): IrEvent[] {
    const item = this.#item(e);
    if (item === undefined) return [];
    this.#items.delete(count(e.output_index));
    const raw = obj(e.item);
    const out: IrEvent[] = [];
    if (item.type === "message") this.#messageDone(out, item, raw);
    else if (item.type === "function_call") {
      if (item.part && !item.part.streamed)
        out.push({ type: "arguments", index: item.part.index, json: str(raw.arguments) ?? "" });
      this.#close(out, item);
    } else this.#reasoningDone(out, item, raw);
    return out;
  }

  /** Content parts the stream did not deliver are sent whole from the done item. */
  #messageDone(out: IrEvent[], item: OpenItem, raw: Obj): void {
    this.#close(out, item);
    arr(raw.content).forEach((c, content) => {
      const part = contentOf(c);
      if (item.contentDone.has(content) || part === undefined) return;
      const index = this.#open(out, item, { type: part.type }, content);
      if (part.text !== "") out.push({ type: "text", index, text: part.text });
      this.#close(out, item);
    });
  }

  #reasoningDone(out: IrEvent[], item: OpenItem, raw: Obj): void {
    if (item.part === undefined) {
      const part = reasoningOf(raw);
      if (part?.type === "redacted_thinking") this.#open(out, item, part);
      else if (part?.type === "thinking") {
        const index = this.#open(out, item, { type: "thinking" });
        out.push({ type: "thinking", index, text: part.text });
        if (part.signature) out.push({ type: "signature", index, signature: part.signature });
      }
    } else {
      const signature = sealReasoning(str(raw.id), str(raw.encrypted_content));
      if (signature) out.push({ type: "signature", index: item.part.index, signature });
    }
    this.#close(out, item);
  }
}
