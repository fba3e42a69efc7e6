// Messages answers ↔ the internal form: reading an upstream's message object and event stream
// (message_start, content blocks, message_delta, message_stop), and writing them for a Messages
// client. Thinking blocks carry their signature both ways. Server-tool blocks (web search
// results, …) have no counterpart elsewhere and are dropped when read. A call of the json_object
// answer tool (json-answer.ts) is read as the answer's text, and its `tool_use` stop as the end.
// Writing: every object carries the fields the official Message, Usage and event types declare
// (unknown ones null). A refusal part (OpenAI) becomes a text block and the stop reason
// `refusal`, Messages' own way of saying it; redacted thinking stays a redacted_thinking block.
// The input usage of message_start is the gateway's own count when the upstream reports usage
// only at the end (OpenAI protocols); message_delta then carries the upstream's real figures.
import { sseJson } from "../sse.ts";
import type { IrEvent, IrPart, IrPartStart, IrReply, IrStop, IrUsage } from "../text-form.ts";
import { ZERO_USAGE } from "../text-form.ts";
import { JsonReplyReader, type ReplyWriter } from "./convert.ts";
import {
  deltaUsageToAnthropic,
  stopFromMessages,
  stopToMessages,
  usageFromAnthropic,
  usageToAnthropic,
} from "./finish.ts";
import { JSON_ANSWER_TOOL } from "./json-answer.ts";
import { argumentsObject, argumentsText, arr, count, newId, type Obj, obj, str } from "./narrow.ts";
import { lacking, lackingEvent, MessagesToolUse } from "./reply-check.ts";

function partOf(block: Obj): IrPart | undefined {
  switch (block.type) {
    case "text":
      return { type: "text", text: str(block.text) ?? "" };
    case "thinking":
      return { type: "thinking", text: str(block.thinking) ?? "", signature: str(block.signature) };
    case "redacted_thinking":
      return { type: "redacted_thinking", data: str(block.data) ?? "" };
    case "tool_use":
      if (block.name === JSON_ANSWER_TOOL) return { type: "text", text: argumentsText(block.input) };
      return {
        type: "tool_call",
        id: str(block.id) ?? "",
        name: str(block.name) ?? "",
        arguments: argumentsText(block.input),
      };
    default:
      return undefined;
  }
}

/** A complete Messages answer in the internal form. */
export function readMessagesReply(json: Obj): IrReply {
  const blocks = arr(json.content).map(obj);
  const answered = blocks.some((b) => b.type === "tool_use" && b.name === JSON_ANSWER_TOOL);
  return {
    id: str(json.id) ?? "",
    model: str(json.model) ?? "",
    parts: blocks.flatMap((b) => partOf(b) ?? []),
    stop: answerStop(stopFromMessages(json.stop_reason), answered),
    stopSequence: str(json.stop_sequence),
    usage: usageFromAnthropic(json.usage),
  };
}

/** The answer tool's call is the answer: its `tool_use` stop is the end of a complete answer. */
function answerStop(stop: IrStop, answered: boolean): IrStop {
  return answered && stop === "tool" ? "end" : stop;
}

function startOf(block: Obj): IrPartStart | undefined {
  switch (block.type) {
    case "text":
    case "thinking":
      return { type: block.type };
    case "redacted_thinking":
      return { type: "redacted_thinking", data: str(block.data) ?? "" };
    case "tool_use":
      if (block.name === JSON_ANSWER_TOOL) return { type: "text" };
      return { type: "tool_call", id: str(block.id) ?? "", name: str(block.name) ?? "" };
    default:
      return undefined;
  }
}

/** Reads a Messages SSE stream into internal events. */
export class MessagesReader extends JsonReplyReader {
  readonly #blocks = new Map<number, number>();
  /** Parts that are the json_object answer tool's call, read as text. */
  readonly #answers = new Set<number>();
  #next = 0;
  #usage: Obj = {};
  #stop: IrStop = "end";
  #stopSequence: string | undefined;
  protected event(name: string | undefined, e: Obj): IrEvent[] {
    switch (name ?? e.type) {
      case "message_start": {
        const message = obj(e.message);
        this.#usage = { ...obj(message.usage) };
        const usage = usageFromAnthropic(this.#usage);
        return [{ type: "start", id: str(message.id) ?? "", model: str(message.model) ?? "", usage }];
      }
      case "content_block_start":
        return this.#start(e);
      case "content_block_delta":
        return this.#delta(e);
      case "content_block_stop": {
        const index = this.#blocks.get(count(e.index));
        return index === undefined ? [] : [{ type: "part_stop", index }];
      }
      case "message_delta": {
        const delta = obj(e.delta);
        if (delta.stop_reason) this.#stop = stopFromMessages(delta.stop_reason);
        this.#stopSequence = str(delta.stop_sequence) ?? this.#stopSequence;
        for (const [k, v] of Object.entries(obj(e.usage))) if (typeof v === "number") this.#usage[k] = v;
        return [];
      }
      case "message_stop":
        this.done = true;
        return [
          {
            type: "finish",
            stop: answerStop(this.#stop, this.#answers.size > 0),
            stopSequence: this.#stopSequence,
            usage: usageFromAnthropic(this.#usage),
          },
        ];
      case "error":
        this.done = true;
        return [{ type: "error", message: str(obj(e.error).message) ?? "The upstream reported an error." }];
      default:
        return [];
    }
  }

  #start(e: Obj): IrEvent[] {
    const block = obj(e.content_block);
    if (block.type === "tool_use") {
      const missing = lacking(MessagesToolUse, block, "content_block");
      if (missing !== undefined) {
        this.done = true;
        return [lackingEvent("Messages", missing)];
      }
    }
    const part = startOf(block);
    if (part === undefined) return [];
    const index = this.#next++;
    this.#blocks.set(count(e.index), index);
    if (block.type === "tool_use" && block.name === JSON_ANSWER_TOOL) this.#answers.add(index);
    const out: IrEvent[] = [{ type: "part_start", index, part }];
    const text = str(block.text);
    if (part.type === "text" && text) out.push({ type: "text", index, text });
    return out;
  }

  #delta(e: Obj): IrEvent[] {
    const index = this.#blocks.get(count(e.index));
    if (index === undefined) return [];
    const d = obj(e.delta);
    switch (d.type) {
      case "text_delta":
        return [{ type: "text", index, text: str(d.text) ?? "" }];
      case "thinking_delta":
        return [{ type: "thinking", index, text: str(d.thinking) ?? "" }];
      case "signature_delta":
        return [{ type: "signature", index, signature: str(d.signature) ?? "" }];
      case "input_json_delta": {
        const json = str(d.partial_json) ?? "";
        if (json === "") return [];
        return [
          this.#answers.has(index) ? { type: "text", index, text: json } : { type: "arguments", index, json },
        ];
      }
      default:
        return [];
    }
  }
}

/** Writes internal events as a Messages event stream, and the message object. */
export class MessagesWriter implements ReplyWriter {
  readonly #model: string;
  readonly #estimate: number;
  readonly #id = `msg_${newId()}`;
  readonly #content: Obj[] = [];
  readonly #blocks = new Map<number, { block: Obj; text: string }>();
  #stop: IrStop | undefined;
  #stopSequence: string | undefined;
  #usage: IrUsage | undefined;
  #refused = false;

  /** `model` is the id the client asked for; `inputEstimate` the gateway's count of the prompt. */
  constructor(model: string, inputEstimate: number) {
    this.#model = model;
    this.#estimate = inputEstimate;
  }

  answer(): Obj {
    return {
      id: this.#id,
      type: "message",
      role: "assistant",
      model: this.#model,
      content: this.#content.filter((b) => b !== undefined),
      ...this.#stopFields(),
      container: null,
      usage: usageToAnthropic(this.#usage ?? ZERO_USAGE),
    };
  }

  /** stop_reason, stop_sequence and stop_details (the refusal's, when refused). */
  #stopFields(): Obj {
    const reason = this.#stop === undefined ? null : stopToMessages(this.#stop, this.#refused);
    return {
      stop_reason: reason,
      stop_sequence: this.#stopSequence ?? null,
      stop_details: reason === "refusal" ? { type: "refusal", category: null, explanation: null } : null,
    };
  }

  push(event: IrEvent): Uint8Array[] {
    switch (event.type) {
      case "start": {
        const usage = event.usage ?? { ...ZERO_USAGE, input: this.#estimate };
        const message = {
          ...this.answer(),
          usage: { ...usageToAnthropic({ ...usage, output: 0 }), output_tokens: 1 },
        };
        return [sseJson("message_start", { type: "message_start", message })];
      }
      case "part_start":
        return this.#start(event.index, event.part);
      case "text":
        return this.#delta(event.index, event.text, { type: "text_delta", text: event.text });
      case "thinking":
        return this.#delta(event.index, event.text, { type: "thinking_delta", thinking: event.text });
      case "arguments":
        return this.#delta(event.index, event.json, { type: "input_json_delta", partial_json: event.json });
      case "signature": {
        const b = this.#blocks.get(event.index);
        if (b === undefined) return [];
        b.block.signature = event.signature;
        return [this.#blockDelta(event.index, { type: "signature_delta", signature: event.signature })];
      }
      case "part_stop":
        return this.#stopBlock(event.index);
      case "finish": {
        this.#stop = event.stop;
        this.#stopSequence = event.stopSequence;
        this.#usage = event.usage;
        const delta = { ...this.#stopFields(), container: null };
        return [
          sseJson("message_delta", {
            type: "message_delta",
            delta,
            usage: deltaUsageToAnthropic(event.usage),
          }),
          sseJson("message_stop", { type: "message_stop" }),
        ];
      }
      case "error":
        return [sseJson("error", { type: "error", error: { type: "api_error", message: event.message } })];
    }
  }

  #blockDelta(index: number, delta: Obj): Uint8Array {
    return sseJson("content_block_delta", { type: "content_block_delta", index, delta });
  }

  #start(index: number, part: IrPartStart): Uint8Array[] {
    let block: Obj;
    if (part.type === "refusal") this.#refused = true;
    if (part.type === "text" || part.type === "refusal") block = { type: "text", text: "", citations: null };
    else if (part.type === "thinking") block = { type: "thinking", thinking: "", signature: "" };
    else if (part.type === "redacted_thinking") block = { type: "redacted_thinking", data: part.data };
    else block = { type: "tool_use", id: part.id, name: part.name, input: {}, caller: { type: "direct" } };
    this.#blocks.set(index, { block, text: "" });
    return [
      sseJson("content_block_start", { type: "content_block_start", index, content_block: { ...block } }),
    ];
  }

  #delta(index: number, text: string, delta: Obj): Uint8Array[] {
    const b = this.#blocks.get(index);
    if (b === undefined) return [];
    b.text += text;
    return [this.#blockDelta(index, delta)];
  }

  #stopBlock(index: number): Uint8Array[] {
    const b = this.#blocks.get(index);
    if (b === undefined) return [];
    this.#blocks.delete(index);
    const { block } = b;
    if (block.type === "text") block.text = b.text;
    else if (block.type === "thinking") block.thinking = b.text;
    else if (block.type === "tool_use") block.input = argumentsObject(b.text);
    this.#content[index] = block;
    return [sseJson("content_block_stop", { type: "content_block_stop", index })];
  }
}
