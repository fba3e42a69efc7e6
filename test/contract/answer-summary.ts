// What a client can read from an answer, in one form for every protocol: text, refusal, thinking
// and its signature, redacted thinking, tool-call arguments, the stop and the cache token counts.
// Built from a complete answer object or from the events of a streamed one, so the answer matrix
// can say what crossed a translation without caring which protocol carried it.

import { openReasoning, openRedacted } from "../../src/wire/translate/reasoning-seal.ts";
import type { Protocol } from "./answer-fixtures.ts";

type Obj = Record<string, unknown>;

export interface Summary {
  text: string;
  refusal: string;
  thinking: string;
  signature: string;
  redacted: string[];
  toolArgs: string;
  /** Responses status/incomplete reason, Chat finish_reason, Messages stop_reason. */
  stop: string;
  /** All input tokens, cached and cache-written included. */
  input: number;
  cached: number;
  cacheWrite: number;
}

const obj = (v: unknown): Obj => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Obj) : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string => (typeof v === "string" ? v : "");
const num = (v: unknown): number => (typeof v === "number" ? v : 0);

function empty(): Summary {
  return {
    text: "",
    refusal: "",
    thinking: "",
    signature: "",
    redacted: [],
    toolArgs: "",
    stop: "",
    input: 0,
    cached: 0,
    cacheWrite: 0,
  };
}

function fromResponse(r: Obj): Summary {
  const s = empty();
  for (const raw of arr(r.output)) {
    const item = obj(raw);
    if (item.type === "message")
      for (const c of arr(item.content).map(obj)) {
        if (c.type === "refusal") s.refusal += str(c.refusal);
        else s.text += str(c.text);
      }
    else if (item.type === "function_call") s.toolArgs += str(item.arguments);
    else if (item.type === "reasoning") {
      const text = arr(item.summary)
        .map((p) => str(obj(p).text))
        .join("\n\n");
      // Anthropic's redacted data reaches a Responses client marked (reasoning-seal.ts): compare the data.
      const encrypted = str(item.encrypted_content);
      if (text === "" && encrypted !== "") s.redacted.push(openRedacted(encrypted) ?? encrypted);
      else {
        s.thinking += text;
        s.signature += str(item.encrypted_content);
      }
    }
  }
  const reason = str(obj(r.incomplete_details).reason);
  s.stop = reason ? `${str(r.status)}/${reason}` : str(r.status);
  const u = obj(r.usage);
  s.input = num(u.input_tokens);
  s.cached = num(obj(u.input_tokens_details).cached_tokens);
  s.cacheWrite = num(obj(u.input_tokens_details).cache_write_tokens);
  return s;
}

function chatUsage(s: Summary, u: Obj): void {
  s.input = num(u.prompt_tokens);
  s.cached = num(obj(u.prompt_tokens_details).cached_tokens);
  s.cacheWrite = num(obj(u.prompt_tokens_details).cache_write_tokens);
}

function fromChat(c: Obj): Summary {
  const s = empty();
  const choice = obj(arr(c.choices)[0]);
  const message = obj(choice.message);
  s.text = str(message.content);
  s.refusal = str(message.refusal);
  s.toolArgs = arr(message.tool_calls)
    .map((t) => str(obj(obj(t).function).arguments))
    .join("");
  s.stop = str(choice.finish_reason);
  chatUsage(s, obj(c.usage));
  return s;
}

function messagesUsage(s: Summary, u: Obj): void {
  s.cached = num(u.cache_read_input_tokens);
  s.cacheWrite = num(u.cache_creation_input_tokens);
  s.input = num(u.input_tokens) + s.cached + s.cacheWrite;
}

/** A Messages client sees a Responses reasoning item's content sealed with its id: compare the content. */
function unsealed(signature: string): string {
  return openReasoning(signature)?.encrypted ?? signature;
}

function block(s: Summary, b: Obj): void {
  if (b.type === "text") s.text += str(b.text);
  else if (b.type === "thinking") {
    s.thinking += str(b.thinking);
    s.signature += unsealed(str(b.signature));
  } else if (b.type === "redacted_thinking") s.redacted.push(unsealed(str(b.data)));
  else if (b.type === "tool_use") s.toolArgs += JSON.stringify(b.input);
}

function fromMessage(m: Obj): Summary {
  const s = empty();
  for (const b of arr(m.content)) block(s, obj(b));
  s.stop = str(m.stop_reason);
  messagesUsage(s, obj(m.usage));
  return s;
}

/** The summary of a complete answer. */
export function summarize(protocol: Protocol, answer: Obj): Summary {
  if (protocol === "responses") return fromResponse(answer);
  return protocol === "chat" ? fromChat(answer) : fromMessage(answer);
}

/** Responses: the final response, with its text checked against the deltas by the caller. */
function streamedResponses(events: Obj[]): Summary {
  const final = events.find((e) => e.type === "response.completed" || e.type === "response.incomplete");
  const s = fromResponse(obj(final?.response));
  // What the deltas said, so a final object that disagrees with its stream is caught.
  const text = events
    .filter((e) => e.type === "response.output_text.delta")
    .map((e) => str(e.delta))
    .join("");
  const refusal = events
    .filter((e) => e.type === "response.refusal.delta")
    .map((e) => str(e.delta))
    .join("");
  if (text !== s.text) s.text = `deltas "${text}" ≠ final "${s.text}"`;
  if (refusal !== s.refusal) s.refusal = `deltas "${refusal}" ≠ final "${s.refusal}"`;
  return s;
}

function streamedChat(events: Obj[]): Summary {
  const s = empty();
  for (const e of events) {
    if (e.usage !== null && typeof e.usage === "object") chatUsage(s, obj(e.usage));
    const choice = obj(arr(e.choices)[0]);
    const delta = obj(choice.delta);
    s.text += str(delta.content);
    s.refusal += str(delta.refusal);
    for (const t of arr(delta.tool_calls)) s.toolArgs += str(obj(obj(t).function).arguments);
    if (choice.finish_reason) s.stop = str(choice.finish_reason);
  }
  return s;
}

function streamedMessages(events: Obj[]): Summary {
  const s = empty();
  const blocks = new Map<number, Obj>();
  const json = new Map<number, string>();
  for (const e of events) {
    const index = num(e.index);
    if (e.type === "content_block_start") blocks.set(index, { ...obj(e.content_block) });
    else if (e.type === "content_block_delta") {
      const b = blocks.get(index) ?? {};
      const d = obj(e.delta);
      if (d.type === "text_delta") b.text = str(b.text) + str(d.text);
      else if (d.type === "thinking_delta") b.thinking = str(b.thinking) + str(d.thinking);
      else if (d.type === "signature_delta") b.signature = str(b.signature) + str(d.signature);
      else if (d.type === "input_json_delta") json.set(index, (json.get(index) ?? "") + str(d.partial_json));
    } else if (e.type === "content_block_stop") {
      const b = blocks.get(index) ?? {};
      if (b.type === "tool_use") b.input = JSON.parse(json.get(index) || "{}");
      block(s, b);
    } else if (e.type === "message_delta") {
      s.stop = str(obj(e.delta).stop_reason);
      messagesUsage(s, obj(e.usage));
    }
  }
  return s;
}

/** The summary of a streamed answer's JSON events (`[DONE]` left out). */
export function summarizeStream(protocol: Protocol, events: Obj[]): Summary {
  if (protocol === "responses") return streamedResponses(events);
  return protocol === "chat" ? streamedChat(events) : streamedMessages(events);
}
