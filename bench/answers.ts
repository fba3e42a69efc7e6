// The bench upstream's fixed answers in each protocol it speaks: one complete answer and one
// 64-event SSE stream each for OpenAI Chat Completions, OpenAI Responses and Anthropic Messages,
// shaped as the real APIs send them (event names, sequence numbers, the usage each reports). Also
// read by the usage-tap micro bench (tap-cost.ts), so both measure the same events.

export type Protocol = "chat" | "responses" | "messages";

/** Events per stream in every protocol (so CPU per event compares across protocols). */
export const STREAM_EVENTS = 64;
export const MODEL_ID = "modelx-5.5";
/** The start of the fixed answer text: probes check it came back through the target. */
export const ANSWER_TEXT =
  "The gateway relays this fixed answer so that every target is measured against the same upstream.";

const created = 1_767_225_600;
const INPUT_TOKENS = 19;

const chatAnswer = {
  id: "chatcmpl-bench0000000000000000000000",
  object: "chat.completion",
  created,
  model: MODEL_ID,
  choices: [
    {
      index: 0,
      message: { role: "assistant", content: ANSWER_TEXT, refusal: null, annotations: [] },
      logprobs: null,
      finish_reason: "stop",
    },
  ],
  usage: {
    prompt_tokens: INPUT_TOKENS,
    completion_tokens: 18,
    total_tokens: INPUT_TOKENS + 18,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0 },
  },
  service_tier: "default",
  system_fingerprint: "fp_bench",
};

/** Chat: a role chunk, 62 content chunks, and the finish chunk with usage followed by `[DONE]`. */
function chatEvents(): string[] {
  return Array.from({ length: STREAM_EVENTS }, (_, i) => {
    const last = i === STREAM_EVENTS - 1;
    const delta = i === 0 ? { role: "assistant", content: "" } : last ? {} : { content: ` w${i}` };
    const body: Record<string, unknown> = {
      id: chatAnswer.id,
      object: "chat.completion.chunk",
      created,
      model: MODEL_ID,
      system_fingerprint: "fp_bench",
      choices: [{ index: 0, delta, logprobs: null, finish_reason: last ? "stop" : null }],
    };
    if (last) {
      const out = STREAM_EVENTS - 2;
      body.usage = { prompt_tokens: INPUT_TOKENS, completion_tokens: out, total_tokens: INPUT_TOKENS + out };
    }
    return `data: ${JSON.stringify(body)}\n\n${last ? "data: [DONE]\n\n" : ""}`;
  });
}

const RESPONSE_ID = "resp_bench000000000000000000000000000000000000000";
const MESSAGE_ITEM_ID = "msg_bench000000000000000000000000000000000000000";

function responseObject(status: "in_progress" | "completed", text: string | undefined, outputTokens: number) {
  const output =
    text === undefined
      ? []
      : [
          {
            id: MESSAGE_ITEM_ID,
            type: "message",
            status: "completed",
            role: "assistant",
            content: [{ type: "output_text", annotations: [], logprobs: [], text }],
          },
        ];
  return {
    id: RESPONSE_ID,
    object: "response",
    created_at: created,
    status,
    background: false,
    error: null,
    incomplete_details: null,
    instructions: null,
    max_output_tokens: 64,
    model: MODEL_ID,
    output,
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    service_tier: "default",
    store: false,
    temperature: 1,
    text: { format: { type: "text" }, verbosity: "medium" },
    tool_choice: "auto",
    tools: [],
    top_p: 1,
    truncation: "disabled",
    usage:
      status === "completed"
        ? {
            input_tokens: INPUT_TOKENS,
            input_tokens_details: { cached_tokens: 0 },
            output_tokens: outputTokens,
            output_tokens_details: { reasoning_tokens: 0 },
            total_tokens: INPUT_TOKENS + outputTokens,
          }
        : null,
    user: null,
    metadata: {},
  };
}

const sse = (name: string, data: object) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;

/** Responses: created, in_progress, item and part added, 56 text deltas, the dones, completed. */
function responsesEvents(): string[] {
  const deltas = Array.from({ length: STREAM_EVENTS - 8 }, (_, i) => ` w${i + 1}`);
  const text = deltas.join("");
  const at = { item_id: MESSAGE_ITEM_ID, output_index: 0, content_index: 0 };
  const part = { type: "output_text", annotations: [], logprobs: [], text: "" };
  const item = (status: string, content: unknown[]) => ({
    id: MESSAGE_ITEM_ID,
    type: "message",
    status,
    role: "assistant",
    content,
  });
  const events: [string, Record<string, unknown>][] = [
    ["response.created", { response: responseObject("in_progress", undefined, 0) }],
    ["response.in_progress", { response: responseObject("in_progress", undefined, 0) }],
    ["response.output_item.added", { output_index: 0, item: item("in_progress", []) }],
    ["response.content_part.added", { ...at, part }],
    ...deltas.map((delta): [string, Record<string, unknown>] => [
      "response.output_text.delta",
      { ...at, delta, logprobs: [], obfuscation: "bench" },
    ]),
    ["response.output_text.done", { ...at, text, logprobs: [] }],
    ["response.content_part.done", { ...at, part: { ...part, text } }],
    ["response.output_item.done", { output_index: 0, item: item("completed", [{ ...part, text }]) }],
    ["response.completed", { response: responseObject("completed", text, deltas.length) }],
  ];
  return events.map(([type, data], sequence) => sse(type, { type, sequence_number: sequence, ...data }));
}

const MESSAGE_ID = "msg_01Bench00000000000000000";

/** Messages: message_start, block start, ping, 58 text deltas, block stop, message_delta, stop. */
function messagesEvents(): string[] {
  const deltas = Array.from({ length: STREAM_EVENTS - 6 }, (_, i) => ` w${i + 1}`);
  const startUsage = {
    input_tokens: INPUT_TOKENS,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    output_tokens: 1,
    service_tier: "standard",
  };
  const message = {
    id: MESSAGE_ID,
    type: "message",
    role: "assistant",
    model: MODEL_ID,
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: startUsage,
  };
  return [
    sse("message_start", { type: "message_start", message }),
    sse("content_block_start", {
      type: "content_block_start",
      index: 0,
      content_block: { type: "text", text: "" },
    }),
    sse("ping", { type: "ping" }),
    ...deltas.map((text) =>
      sse("content_block_delta", {
        type: "content_block_delta",
        index: 0,
        delta: { type: "text_delta", text },
      }),
    ),
    sse("content_block_stop", { type: "content_block_stop", index: 0 }),
    sse("message_delta", {
      type: "message_delta",
      delta: { stop_reason: "end_turn", stop_sequence: null },
      usage: {
        input_tokens: INPUT_TOKENS,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        output_tokens: deltas.length,
      },
    }),
    sse("message_stop", { type: "message_stop" }),
  ];
}

const messagesAnswer = {
  id: MESSAGE_ID,
  type: "message",
  role: "assistant",
  model: MODEL_ID,
  content: [{ type: "text", text: ANSWER_TEXT }],
  stop_reason: "end_turn",
  stop_sequence: null,
  usage: {
    input_tokens: INPUT_TOKENS,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    output_tokens: 18,
    service_tier: "standard",
  },
};

export interface ProtocolAnswers {
  /** The complete answer's JSON text. */
  answer: string;
  /** The stream, one SSE event's text per entry (Chat's last entry carries `data: [DONE]` too). */
  events: string[];
  /** Text only the stream's last event holds: a client has the whole stream when it sees it. */
  end: string;
}

export const ANSWERS: Readonly<Record<Protocol, ProtocolAnswers>> = {
  chat: { answer: JSON.stringify(chatAnswer), events: chatEvents(), end: "data: [DONE]" },
  responses: {
    answer: JSON.stringify(responseObject("completed", ANSWER_TEXT, 18)),
    events: responsesEvents(),
    end: "response.completed",
  },
  messages: { answer: JSON.stringify(messagesAnswer), events: messagesEvents(), end: "message_stop" },
};

/** The upstream protocol of a request path (`/v1/responses`, `/v1/messages`, else Chat). */
export function protocolOfPath(path: string): Protocol {
  if (path.endsWith("/responses")) return "responses";
  if (path.endsWith("/messages")) return "messages";
  return "chat";
}
