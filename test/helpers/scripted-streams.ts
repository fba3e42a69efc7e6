// Scripted upstream answer streams for the cut-stream tests: one answer per upstream protocol (Chat
// Completions, Responses, Messages) made of chosen content deltas — visible text, or reasoning only
// (Chat `reasoning_content`, Responses reasoning summary, Messages thinking) — and, when the script
// says so, the protocol's final usage and end. A script that stops before them is cut: the body
// closes there (`drop`: the upstream went away mid-stream) or stays open until the gateway cancels
// it (`hold`: the client is the one that goes). Facts from the providers' published streaming
// formats, as in sse-dialects.ts; `clientDeltas` reads a relayed stream as a client does.
import { createParser } from "eventsource-parser";

export type Protocol = "chat" | "responses" | "messages";

export interface Script {
  /** Each delta's text, in order. */
  pieces: readonly string[];
  /** Reasoning deltas instead of visible text. */
  thinking: boolean;
  /** How many of the pieces the upstream sends (all when undefined). */
  cutAt?: number | undefined;
  /** After the pieces sent: the final usage and end (`complete`), a closed body, or an open one. */
  end: "complete" | "drop" | "hold";
  /** The upstream's reported input tokens (Messages: in `message_start`, final for input). */
  input: number;
  /** The final usage's output tokens (`complete` only). */
  output: number;
}

const encoder = new TextEncoder();

function sse(name: string | undefined, data: unknown): string {
  const json = typeof data === "string" ? data : JSON.stringify(data);
  return `${name === undefined ? "" : `event: ${name}\n`}data: ${json}\n\n`;
}

function chatEvents(s: Script, pieces: readonly string[]): string[] {
  const chunk = (choices: unknown[], usage?: unknown) => ({
    id: "chatcmpl-cut",
    object: "chat.completion.chunk",
    created: 1_700_000_000,
    model: "upstream-model",
    choices,
    ...(usage === undefined ? {} : { usage }),
  });
  const out = [
    sse(undefined, chunk([{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }])),
  ];
  for (const piece of pieces) {
    const delta = s.thinking ? { reasoning_content: piece } : { content: piece };
    out.push(sse(undefined, chunk([{ index: 0, delta, finish_reason: null }])));
  }
  if (s.end !== "complete") return out;
  const usage = { prompt_tokens: s.input, completion_tokens: s.output, total_tokens: s.input + s.output };
  out.push(sse(undefined, chunk([{ index: 0, delta: {}, finish_reason: "stop" }])));
  out.push(sse(undefined, chunk([], usage)), sse(undefined, "[DONE]"));
  return out;
}

function responsesEvents(s: Script, pieces: readonly string[]): string[] {
  let seq = 0;
  const e = (type: string, body: Record<string, unknown>) =>
    sse(type, { type, sequence_number: seq++, ...body });
  const base = {
    id: "resp_cut",
    object: "response",
    created_at: 1_700_000_000,
    model: "upstream-model",
    output: [],
  };
  const item = s.thinking
    ? { id: "rs_1", type: "reasoning", summary: [] }
    : { id: "msg_1", type: "message", role: "assistant", status: "in_progress", content: [] };
  const out = [
    e("response.created", { response: { ...base, status: "in_progress", usage: null } }),
    e("response.output_item.added", { output_index: 0, item }),
  ];
  const at = { item_id: item.id, output_index: 0 };
  if (s.thinking)
    out.push(
      e("response.reasoning_summary_part.added", {
        ...at,
        summary_index: 0,
        part: { type: "summary_text", text: "" },
      }),
    );
  else
    out.push(
      e("response.content_part.added", {
        ...at,
        content_index: 0,
        part: { type: "output_text", text: "", annotations: [] },
      }),
    );
  for (const delta of pieces) {
    if (s.thinking) out.push(e("response.reasoning_summary_text.delta", { ...at, summary_index: 0, delta }));
    else out.push(e("response.output_text.delta", { ...at, content_index: 0, delta }));
  }
  if (s.end !== "complete") return out;
  const usage = { input_tokens: s.input, output_tokens: s.output, total_tokens: s.input + s.output };
  out.push(e("response.completed", { response: { ...base, status: "completed", usage } }));
  return out;
}

function messagesEvents(s: Script, pieces: readonly string[]): string[] {
  const e = (type: string, body: Record<string, unknown>) => sse(type, { type, ...body });
  const message = {
    id: "msg_cut",
    type: "message",
    role: "assistant",
    model: "upstream-model",
    content: [],
    stop_reason: null,
    stop_sequence: null,
    // Anthropic's provisional figure: output_tokens 1 until message_delta.
    usage: { input_tokens: s.input, output_tokens: 1 },
  };
  const block = s.thinking ? { type: "thinking", thinking: "", signature: "" } : { type: "text", text: "" };
  const out = [e("message_start", { message }), e("content_block_start", { index: 0, content_block: block })];
  for (const piece of pieces) {
    const delta = s.thinking
      ? { type: "thinking_delta", thinking: piece }
      : { type: "text_delta", text: piece };
    out.push(e("content_block_delta", { index: 0, delta }));
  }
  if (s.end !== "complete") return out;
  out.push(
    e("content_block_stop", { index: 0 }),
    e("message_delta", {
      delta: { stop_reason: "end_turn", stop_sequence: null },
      usage: { output_tokens: s.output },
    }),
    e("message_stop", {}),
  );
  return out;
}

const EVENTS: Readonly<Record<Protocol, (s: Script, pieces: readonly string[]) => string[]>> = {
  chat: chatEvents,
  responses: responsesEvents,
  messages: messagesEvents,
};

/** The pieces the script sends (its cut applied). */
export function sentPieces(s: Script): readonly string[] {
  return s.cutAt === undefined ? s.pieces : s.pieces.slice(0, s.cutAt);
}

/** The script's SSE events in `protocol`. */
export function scriptedEvents(protocol: Protocol, s: Script): string[] {
  return EVENTS[protocol](s, sentPieces(s));
}

/**
 * An upstream's streamed answer of `events`; then the body closes, or with `hold` stays open until
 * the reader cancels it (the gateway does when its client goes away), closed after `holdMs` at the latest.
 */
export function eventStream(events: readonly string[], hold: boolean, holdMs = 30_000): Response {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const event of events) controller.enqueue(encoder.encode(event));
      if (hold) timer = setTimeout(() => controller.close(), holdMs);
      else controller.close();
    },
    cancel() {
      clearTimeout(timer);
    },
  });
  return new Response(body, { headers: { "content-type": "text/event-stream" } });
}

/** The script as an upstream's streamed answer. */
export function scriptedResponse(protocol: Protocol, s: Script): Response {
  return eventStream(scriptedEvents(protocol, s), s.end === "hold");
}

/** A complete (non-stream) answer of `text` in `protocol` whose upstream reports no usage at all. */
export function answerWithoutUsage(protocol: Protocol, text: string): Response {
  switch (protocol) {
    case "chat":
      return Response.json({
        id: "chatcmpl-bare",
        object: "chat.completion",
        created: 1_700_000_000,
        model: "upstream-model",
        choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
      });
    case "responses":
      return Response.json({
        id: "resp_bare",
        object: "response",
        created_at: 1_700_000_000,
        model: "upstream-model",
        status: "completed",
        output: [
          {
            id: "msg_1",
            type: "message",
            role: "assistant",
            status: "completed",
            content: [{ type: "output_text", text, annotations: [] }],
          },
        ],
      });
    case "messages":
      return Response.json({
        id: "msg_bare",
        type: "message",
        role: "assistant",
        model: "upstream-model",
        content: [{ type: "text", text }],
        stop_reason: "end_turn",
        stop_sequence: null,
      });
  }
}

/** What a client of `protocol` read: the text of its content deltas (text and reasoning), and their count. */
export interface ClientDeltas {
  text: string;
  deltas: number;
  errors: number;
}

/** A reader of a client's SSE stream, fed as bytes arrive. */
export function clientDeltas(protocol: Protocol): { feed(chunk: string): void; seen: ClientDeltas } {
  const seen: ClientDeltas = { text: "", deltas: 0, errors: 0 };
  const parser = createParser({
    onEvent: (e) => {
      if (e.data === "[DONE]") return;
      const json = JSON.parse(e.data) as Record<string, unknown>;
      if (json.error !== undefined || json.type === "error") seen.errors++;
      let piece: string | undefined;
      if (protocol === "chat") {
        const choices = (json.choices ?? []) as { delta?: { content?: unknown } }[];
        const content = choices[0]?.delta?.content;
        piece = typeof content === "string" && content !== "" ? content : undefined;
      } else if (protocol === "responses") {
        const type = String(json.type);
        piece = type.endsWith(".delta") && typeof json.delta === "string" ? json.delta : undefined;
      } else if (json.type === "content_block_delta") {
        const delta = json.delta as { text?: unknown; thinking?: unknown };
        const text = delta.text ?? delta.thinking;
        piece = typeof text === "string" ? text : undefined;
      }
      if (piece === undefined) return;
      seen.text += piece;
      seen.deltas++;
    },
  });
  return { feed: (chunk) => parser.feed(chunk), seen };
}
