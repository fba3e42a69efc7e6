// SSE streams as real servers write them, for the dialect tests: one answer per protocol (Chat
// Completions, Responses, Messages) framed in a chosen dialect — line ends (LF, CRLF, CR), `data:`
// with or without its space, keep-alive comments, compact, spaced (Python json.dumps, non-ASCII
// escaped) or pretty-printed JSON split over several `data:` lines, and for Chat where the usage
// goes (its own chunk, the finish chunk, every chunk as vLLM's continuous usage) and whether
// `[DONE]` ends it. Facts from the providers' published streaming formats; the text has multi-byte
// characters so byte slices cut inside them. `clientView` reads a relayed stream as a client does.
import { createParser } from "eventsource-parser";

export const TEXT_PIECES = ["Grüße", ", wörld ", "🌍 ", "世界", " — done."];
export const TEXT = TEXT_PIECES.join("");

/** The token counts every replayed answer reports (exactly these must be billed). */
export const REPORTED = { input: 37, cached: 5, output: 11 };

export interface Dialect {
  name: string;
  eol: "\n" | "\r\n" | "\r";
  json: "compact" | "spaced" | "pretty";
  /** `data: x` (true) or `data:x` (false). */
  dataSpace: boolean;
  /** A `: keep-alive` comment before every event. */
  comments: boolean;
  /** Chat: usage on its own chunk (empty choices), on the finish chunk, or on every chunk. */
  usage: "separate" | "finish" | "every";
  /** Chat: the stream ends with `data: [DONE]`. */
  done: boolean;
  /** Responses and Messages: `event:` lines (some compatible servers send data lines only). */
  eventLines: boolean;
  /** Keys sorted (Python `sort_keys=True`): nested objects' `type` comes before the event's own. */
  sortKeys?: boolean;
}

export const BASE: Dialect = {
  name: "compact LF",
  eol: "\n",
  json: "compact",
  dataSpace: true,
  comments: false,
  usage: "separate",
  done: true,
  eventLines: true,
};

/** The dialects every protocol is replayed in (slicing is chosen by the caller). */
export const DIALECTS: readonly Dialect[] = [
  BASE,
  { ...BASE, name: "CRLF", eol: "\r\n" },
  { ...BASE, name: "CR", eol: "\r" },
  { ...BASE, name: "data: without a space", dataSpace: false },
  { ...BASE, name: "keep-alive comments", comments: true },
  { ...BASE, name: "spaced JSON (json.dumps)", json: "spaced" },
  { ...BASE, name: "pretty JSON over several data lines", json: "pretty" },
  { ...BASE, name: "usage on the finish chunk", usage: "finish" },
  { ...BASE, name: "continuous usage on every chunk", usage: "every" },
  { ...BASE, name: "no [DONE]", done: false },
  { ...BASE, name: "no event lines", eventLines: false },
  { ...BASE, name: "sorted keys, no event lines", json: "spaced", sortKeys: true, eventLines: false },
  {
    name: "everything at once",
    eol: "\r\n",
    json: "pretty",
    dataSpace: false,
    comments: true,
    usage: "finish",
    done: false,
    eventLines: false,
  },
];

/** Python's json.dumps defaults: `", "` and `": "` separators, non-ASCII as \u escapes. */
function spaced(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(spaced).join(", ")}]`;
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value).map(([k, v]) => `${ascii(JSON.stringify(k))}: ${spaced(v)}`);
    return `{${entries.join(", ")}}`;
  }
  return ascii(JSON.stringify(value));
}

function ascii(json: string): string {
  return json.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (typeof value !== "object" || value === null) return value;
  const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries.map(([k, v]) => [k, sorted(v)]));
}

function event(d: Dialect, name: string | undefined, given: unknown): string {
  const payload = d.sortKeys ? sorted(given) : given;
  const data = typeof payload === "string" ? payload : undefined;
  const json =
    data ??
    (d.json === "compact"
      ? JSON.stringify(payload)
      : d.json === "spaced"
        ? spaced(payload)
        : JSON.stringify(payload, null, 2));
  const prefix = d.dataSpace ? "data: " : "data:";
  const lines = [
    ...(d.comments ? [": keep-alive"] : []),
    ...(name !== undefined && d.eventLines ? [`event: ${name}`] : []),
    ...json.split("\n").map((line) => `${prefix}${line}`),
  ];
  return `${lines.join(d.eol)}${d.eol}${d.eol}`;
}

function chatUsage(output: number) {
  return {
    prompt_tokens: REPORTED.input,
    completion_tokens: output,
    total_tokens: REPORTED.input + output,
    prompt_tokens_details: { cached_tokens: REPORTED.cached },
    completion_tokens_details: { reasoning_tokens: 0 },
  };
}

/** A Chat Completions stream answering TEXT. */
export function chatStream(d: Dialect): string {
  const chunk = (choices: unknown[], usage: unknown) => ({
    id: "chatcmpl-1",
    object: "chat.completion.chunk",
    created: 1_700_000_000,
    model: "upstream-model",
    choices,
    ...(usage === undefined ? {} : { usage }),
  });
  // OpenAI sends `usage: null` on every chunk when include_usage is on; vLLM a running count.
  const running = (i: number) =>
    d.usage === "every" ? chatUsage(i) : d.usage === "separate" ? null : undefined;
  const out = [
    event(
      d,
      undefined,
      chunk([{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }], running(0)),
    ),
  ];
  TEXT_PIECES.forEach((piece, i) => {
    out.push(
      event(
        d,
        undefined,
        chunk([{ index: 0, delta: { content: piece }, finish_reason: null }], running(i + 1)),
      ),
    );
  });
  const last = d.usage === "separate" ? null : chatUsage(REPORTED.output);
  out.push(event(d, undefined, chunk([{ index: 0, delta: {}, finish_reason: "stop" }], last)));
  if (d.usage === "separate") out.push(event(d, undefined, chunk([], chatUsage(REPORTED.output))));
  if (d.done) out.push(event(d, undefined, "[DONE]"));
  return out.join("");
}

/** A Responses stream answering TEXT. */
export function responsesStream(d: Dialect): string {
  let seq = 0;
  const e = (type: string, body: Record<string, unknown>) =>
    event(d, type, { type, sequence_number: seq++, ...body });
  const base = {
    id: "resp_1",
    object: "response",
    created_at: 1_700_000_000,
    model: "upstream-model",
    output: [],
    usage: null,
  };
  const message = { id: "msg_1", type: "message", role: "assistant", status: "in_progress", content: [] };
  const part = { type: "output_text", text: "", annotations: [] };
  const done = { ...part, text: TEXT };
  const out = [
    e("response.created", { response: { ...base, status: "in_progress" } }),
    e("response.in_progress", { response: { ...base, status: "in_progress" } }),
    e("response.output_item.added", { output_index: 0, item: message }),
    e("response.content_part.added", { item_id: "msg_1", output_index: 0, content_index: 0, part }),
  ];
  for (const delta of TEXT_PIECES)
    out.push(e("response.output_text.delta", { item_id: "msg_1", output_index: 0, content_index: 0, delta }));
  const item = { ...message, status: "completed", content: [done] };
  out.push(
    e("response.output_text.done", { item_id: "msg_1", output_index: 0, content_index: 0, text: TEXT }),
    e("response.content_part.done", { item_id: "msg_1", output_index: 0, content_index: 0, part: done }),
    e("response.output_item.done", { output_index: 0, item }),
    e("response.completed", {
      response: {
        ...base,
        status: "completed",
        output: [item],
        usage: {
          input_tokens: REPORTED.input,
          input_tokens_details: { cached_tokens: REPORTED.cached },
          output_tokens: REPORTED.output,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: REPORTED.input + REPORTED.output,
        },
      },
    }),
  );
  return out.join("");
}

/** Anthropic usage of message_start: input without cache reads and writes, as Anthropic counts it. */
export interface MessagesUsage {
  input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
  cache_creation?: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
}

export const MESSAGES_USAGE: MessagesUsage = {
  input_tokens: REPORTED.input - REPORTED.cached,
  cache_read_input_tokens: REPORTED.cached,
  cache_creation_input_tokens: 0,
};

/** A Messages stream answering TEXT. */
export function messagesStream(d: Dialect, usage: MessagesUsage = MESSAGES_USAGE): string {
  const e = (type: string, body: Record<string, unknown>) => event(d, type, { type, ...body });
  const message = {
    id: "msg_1",
    type: "message",
    role: "assistant",
    model: "upstream-model",
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { ...usage, output_tokens: 1 },
  };
  const out = [
    e("message_start", { message }),
    e("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
    e("ping", {}),
  ];
  for (const text of TEXT_PIECES)
    out.push(e("content_block_delta", { index: 0, delta: { type: "text_delta", text } }));
  out.push(
    e("content_block_stop", { index: 0 }),
    e("message_delta", {
      delta: { stop_reason: "end_turn", stop_sequence: null },
      usage: { output_tokens: REPORTED.output },
    }),
    e("message_stop", {}),
  );
  return out.join("");
}

/** The client's view: the text, the Chat usage-only chunks, and any error event. */
export function clientView(protocol: "chat" | "responses" | "messages", raw: string) {
  let text = "";
  let usageChunks = 0;
  let errors = 0;
  const parser = createParser({
    onEvent: (e) => {
      if (e.data === "[DONE]") return;
      const json = JSON.parse(e.data) as Record<string, unknown>;
      if (json.error !== undefined || json.type === "error") errors++;
      if (protocol === "chat") {
        const choices = (json.choices ?? []) as { delta?: { content?: string } }[];
        if (choices.length === 0 && json.usage) usageChunks++;
        text += choices[0]?.delta?.content ?? "";
      } else if (json.type === "response.output_text.delta") text += String(json.delta);
      else if (json.type === "content_block_delta") text += String((json.delta as { text: string }).text);
    },
  });
  parser.feed(raw);
  parser.feed("\n\n");
  return { text, usageChunks, errors };
}

/** Each protocol's answer stream in a dialect. */
export const STREAMS: Readonly<Record<"chat" | "responses" | "messages", (d: Dialect) => string>> = {
  chat: chatStream,
  responses: responsesStream,
  messages: (d) => messagesStream(d),
};
