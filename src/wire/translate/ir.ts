// The internal form every text protocol translates through: a request, a complete reply, and the
// events of a streamed reply. A translation is always "protocol A → internal form → protocol B";
// each protocol contributes one reader and one writer, so three protocols need six modules, not nine.
//
// Conventions of the internal form:
// - usage follows OpenAI: `input` includes cached tokens, `output` includes reasoning tokens;
// - a tool call's arguments are a JSON string (Anthropic's `input` object is serialized);
// - thinking keeps its signature (Anthropic `signature`, OpenAI `encrypted_content`), so a thinking
//   block or reasoning item sent back by a client reaches the upstream as it came from there.
import type { JsonSchema, ToolChoiceView } from "../text-view.ts";

export type IrPart =
  | { type: "text"; text: string }
  /** An image by URL; inline images are `data:` URLs. */
  | { type: "image"; url: string }
  /** `id`: the Responses reasoning item's id, when the thinking came from one (sent back with it). */
  | { type: "thinking"; text: string; signature: string | undefined; id?: string | undefined }
  | { type: "redacted_thinking"; data: string }
  | { type: "tool_call"; id: string; name: string; arguments: string }
  | { type: "tool_result"; callId: string; content: IrContent; isError: boolean };

/** Content of a tool result: plain text, or text and image parts. */
export type IrContent = string | IrPart[];

export interface IrMessage {
  /** `system` here is an instruction in the middle of a conversation (leading ones are `IrRequest.system`). */
  role: "system" | "user" | "assistant";
  parts: IrPart[];
}

export interface IrTool {
  name: string;
  description: string | undefined;
  parameters: JsonSchema | undefined;
  strict: boolean | undefined;
}

/** `strict` is the client's own choice; undefined when it made none (Messages formats, omitted fields). */
export type IrFormat =
  | { kind: "json_schema"; name: string; schema: JsonSchema; strict: boolean | undefined }
  | { kind: "json_object" };

export interface IrReasoning {
  /** OpenAI effort (`low` … `xhigh`); undefined when only a budget was given. */
  effort: string | undefined;
  /** Anthropic thinking budget in tokens. */
  budgetTokens: number | undefined;
  /** Whether readable reasoning (a summary, or thinking text) is wanted. */
  summary: boolean;
}

export interface IrRequest {
  model: string;
  /** Leading system / developer instructions, in order. */
  system: string[];
  messages: IrMessage[];
  tools: IrTool[];
  toolChoice: ToolChoiceView;
  parallelToolCalls: boolean | undefined;
  format: IrFormat | undefined;
  maxTokens: number | undefined;
  temperature: number | undefined;
  topP: number | undefined;
  stop: string[];
  reasoning: IrReasoning | undefined;
  /** OpenAI `prompt_cache_key` (Responses and Chat): the client's cache routing hint. */
  promptCacheKey: string | undefined;
  stream: boolean;
}

export type IrStop = "end" | "length" | "tool" | "stop_sequence" | "refusal";

export interface IrUsage {
  /** All input tokens, cached and cache-written included. */
  input: number;
  cached: number;
  cacheWrite: number;
  /** All output tokens, reasoning included. */
  output: number;
  reasoning: number;
}

export const ZERO_USAGE: IrUsage = { input: 0, cached: 0, cacheWrite: 0, output: 0, reasoning: 0 };

/**
 * A part of a reply: any message part, or a refusal — the model declining to answer (Chat
 * `message.refusal`, a Responses `refusal` content part; Messages has no refusal block and writes
 * it as text with `stop_reason: "refusal"`). Refusals exist only in replies, never in requests.
 */
export type IrReplyPart = IrPart | { type: "refusal"; text: string };

/** A complete (non-stream) reply. Parts are text, refusals, thinking, redacted thinking and tool calls. */
export interface IrReply {
  id: string;
  model: string;
  parts: IrReplyPart[];
  stop: IrStop;
  stopSequence: string | undefined;
  usage: IrUsage;
}

/** What a streamed part starts as. */
export type IrPartStart =
  | { type: "text" }
  | { type: "refusal" }
  | { type: "thinking" }
  | { type: "redacted_thinking"; data: string }
  | { type: "tool_call"; id: string; name: string };

/** One step of a streamed reply; `index` numbers parts in order of their start, from 0. */
export type IrEvent =
  | { type: "start"; id: string; model: string; usage: IrUsage | undefined }
  | { type: "part_start"; index: number; part: IrPartStart }
  /** Text of a `text` or `refusal` part. */
  | { type: "text"; index: number; text: string }
  | { type: "thinking"; index: number; text: string }
  | { type: "signature"; index: number; signature: string }
  | { type: "arguments"; index: number; json: string }
  | { type: "part_stop"; index: number }
  | { type: "finish"; stop: IrStop; stopSequence: string | undefined; usage: IrUsage }
  | { type: "error"; message: string };

/** The events that stream a complete reply (used to render non-stream answers with the stream writers). */
export function replyEvents(reply: IrReply): IrEvent[] {
  const events: IrEvent[] = [{ type: "start", id: reply.id, model: reply.model, usage: reply.usage }];
  reply.parts.forEach((part, index) => {
    switch (part.type) {
      case "text":
      case "refusal":
        events.push({ type: "part_start", index, part: { type: part.type } });
        if (part.text !== "") events.push({ type: "text", index, text: part.text });
        break;
      case "thinking":
        events.push({ type: "part_start", index, part: { type: "thinking" } });
        if (part.text !== "") events.push({ type: "thinking", index, text: part.text });
        if (part.signature) events.push({ type: "signature", index, signature: part.signature });
        break;
      case "redacted_thinking":
        events.push({ type: "part_start", index, part: { type: "redacted_thinking", data: part.data } });
        break;
      case "tool_call":
        events.push(
          { type: "part_start", index, part: { type: "tool_call", id: part.id, name: part.name } },
          { type: "arguments", index, json: part.arguments },
        );
        break;
      default:
        return;
    }
    events.push({ type: "part_stop", index });
  });
  events.push({ type: "finish", stop: reply.stop, stopSequence: reply.stopSequence, usage: reply.usage });
  return events;
}

/** A reply writer: turns internal events into one protocol's SSE bytes and its complete answer. */
export interface ReplyWriter {
  push(event: IrEvent): Uint8Array[];
  /** The complete answer object (non-stream body) built from the events so far. */
  answer(): Record<string, unknown>;
}

/** A reply reader: turns one protocol's SSE events into internal events. */
export interface ReplyReader {
  read(name: string | undefined, data: string): IrEvent[];
  /** Events to close the reply when the upstream stream ended (empty if it ended properly). */
  end(): IrEvent[];
}

/** Parses JSON text into an object, or undefined. */
export function parseObject(data: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(data);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
