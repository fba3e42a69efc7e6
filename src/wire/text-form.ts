// The one internal form of text: a request, a complete reply, and the events of a streamed reply,
// in no protocol's shape. Every protocol pair translates through it ("protocol A → internal form →
// protocol B"); the conversions per direction are in translate/ (convert.ts names their contract).
// A request's head (TextView) is the part of the form every decode builds at once, because sizing,
// routing and the simulator need it; the rest is built only when a channel speaks another protocol,
// so a same-protocol request is forwarded with its body as it came.
//
// Conventions of the internal form:
// - usage follows OpenAI: `input` includes cached tokens, `output` includes reasoning tokens;
// - a tool call's arguments are a JSON string (Anthropic's `input` object is serialized);
// - thinking keeps its signature (Anthropic `signature`, OpenAI `encrypted_content`), so a thinking
//   block or reasoning item sent back by a client reaches the upstream as it came from there.

import type { TextProtocol } from "../protocols/index.ts";

/** The client protocols of the text endpoints: one record each in src/protocols/. */
export type { TextProtocol };

/** A JSON Schema object as sent by clients; only the keywords the simulator reads are typed. */
export type JsonSchema = { readonly [key: string]: unknown };

export type IrToolChoice =
  | { mode: "auto" }
  | { mode: "none" }
  | { mode: "required" }
  | { mode: "named"; name: string };

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
  toolChoice: IrToolChoice;
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

/**
 * The head of a request: what every decode fills at once (cheap: no conversation is rebuilt) for
 * sizing, admission, routing, telemetry and the simulator. Its tool, format and reasoning values
 * are the internal form's own, read by the same functions that build the full form.
 */
export interface TextView {
  protocol: TextProtocol;
  model: string;
  stream: boolean;
  /** Every piece of text the model would read (system, messages, tool results, tool definitions). */
  promptText: string;
  /** The text of the last user turn (directives and tool mentions are read from here). */
  lastUserText: string;
  /** The text of the tool result(s) the conversation ends with, sent back by the client; else undefined. */
  toolResult: string | undefined;
  tools: Pick<IrTool, "name" | "parameters">[];
  toolChoice: IrToolChoice;
  outputFormat: IrFormat | undefined;
  /** The client's cap on output tokens (reasoning included), if any. */
  maxOutputTokens: number | undefined;
  /** Reasoning the model is asked to produce (Messages: only with thinking on). */
  reasoning: IrReasoning | undefined;
  /** Chat `stream_options.include_usage`. */
  includeUsage: boolean;
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
