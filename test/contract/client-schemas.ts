// The official shapes of what modelgate emits to clients, as valibot schemas: the OpenAI Responses
// `response` object and its stream events, Chat Completions `chat.completion` and
// `chat.completion.chunk`, the OpenAI error body, and the Anthropic Message with its stream events.
// Written from the published contracts (openai/openai-openapi `openapi.json` of 2026-08-21;
// anthropics/anthropic-sdk-typescript `src/resources/messages/messages.ts` of 2026-08-19, whose
// response types mark every always-present field non-optional). Every field the contract marks
// required is required here (nullable where it is nullable); objects are strict over the
// contract's own property list, so a field that is misplaced or misspelt fails too. Parts of a
// contract the gateway only echoes from the client (tools, text format, reasoning options) are
// checked for their outer type only.
import * as v from "valibot";

const int = v.pipe(v.number(), v.integer(), v.minValue(0));
const nullableString = v.nullable(v.string());
const anyObject = v.record(v.string(), v.unknown());

// ---------------------------------------------------------------- OpenAI Responses

const logProb = v.strictObject({
  token: v.string(),
  logprob: v.number(),
  bytes: v.array(v.number()),
  top_logprobs: v.array(
    v.strictObject({ token: v.string(), logprob: v.number(), bytes: v.array(v.number()) }),
  ),
});

/** OutputTextContent: annotations and logprobs are required. */
const outputText = v.strictObject({
  type: v.literal("output_text"),
  text: v.string(),
  annotations: v.array(anyObject),
  logprobs: v.array(logProb),
});
const refusalContent = v.strictObject({ type: v.literal("refusal"), refusal: v.string() });
const reasoningText = v.strictObject({ type: v.literal("reasoning_text"), text: v.string() });
const summaryText = v.strictObject({ type: v.literal("summary_text"), text: v.string() });
const itemStatus = v.picklist(["in_progress", "completed", "incomplete"]);

const outputMessage = v.strictObject({
  id: v.string(),
  type: v.literal("message"),
  role: v.literal("assistant"),
  content: v.array(v.variant("type", [outputText, refusalContent])),
  phase: v.optional(v.nullable(v.string())),
  status: itemStatus,
});
const functionCall = v.strictObject({
  id: v.optional(v.string()),
  type: v.literal("function_call"),
  call_id: v.string(),
  caller: v.optional(v.nullable(anyObject)),
  namespace: v.optional(v.string()),
  name: v.string(),
  arguments: v.string(),
  status: v.optional(itemStatus),
});
const reasoningItem = v.strictObject({
  type: v.literal("reasoning"),
  id: v.string(),
  encrypted_content: v.optional(nullableString),
  summary: v.array(summaryText),
  content: v.optional(v.array(reasoningText)),
  status: v.optional(itemStatus),
});
/** The output item types the gateway writes (message, function call, reasoning). */
export const outputItem = v.variant("type", [outputMessage, functionCall, reasoningItem]);

/** ResponseUsage: both detail objects and all their fields are required. */
export const responseUsage = v.strictObject({
  input_tokens: int,
  input_tokens_details: v.strictObject({ cached_tokens: int, cache_write_tokens: int }),
  output_tokens: int,
  output_tokens_details: v.strictObject({ reasoning_tokens: int }),
  total_tokens: int,
});

const responseErrorCode = v.picklist([
  "server_error",
  "rate_limit_exceeded",
  "invalid_prompt",
  "data_residency_mismatch",
  "bio_policy",
  "vector_store_timeout",
  "invalid_image",
  "invalid_image_format",
  "invalid_base64_image",
  "invalid_image_url",
  "image_too_large",
  "image_too_small",
  "image_parse_error",
  "image_content_policy_violation",
  "invalid_image_mode",
  "image_file_too_large",
  "unsupported_image_media_type",
  "empty_image_file",
  "failed_to_download_image",
  "image_file_not_found",
]);

/** The Responses `response` object (Response = ModelResponseProperties + ResponseProperties + own). */
export const responseObject = v.strictObject({
  // required
  id: v.string(),
  object: v.literal("response"),
  created_at: v.number(),
  error: v.nullable(v.strictObject({ code: responseErrorCode, message: v.string() })),
  incomplete_details: v.nullable(
    v.strictObject({ reason: v.optional(v.picklist(["max_output_tokens", "content_filter"])) }),
  ),
  instructions: v.nullable(v.union([v.string(), v.array(anyObject)])),
  model: v.string(),
  tools: v.array(anyObject),
  output: v.array(outputItem),
  parallel_tool_calls: v.boolean(),
  metadata: v.nullable(v.record(v.string(), v.string())),
  tool_choice: v.union([v.picklist(["none", "auto", "required"]), anyObject]),
  temperature: v.nullable(v.pipe(v.number(), v.minValue(0), v.maxValue(2))),
  top_p: v.nullable(v.pipe(v.number(), v.minValue(0), v.maxValue(1))),
  // optional
  status: v.optional(v.picklist(["completed", "failed", "in_progress", "cancelled", "queued", "incomplete"])),
  completed_at: v.optional(v.nullable(v.number())),
  top_logprobs: v.optional(v.nullable(int)),
  user: v.optional(v.string()),
  safety_identifier: v.optional(nullableString),
  prompt_cache_key: v.optional(nullableString),
  prompt_cache_retention: v.optional(v.nullable(v.picklist(["in_memory", "24h"]))),
  previous_response_id: v.optional(nullableString),
  background: v.optional(v.nullable(v.boolean())),
  max_tool_calls: v.optional(v.nullable(int)),
  text: v.optional(anyObject),
  prompt: v.optional(v.nullable(anyObject)),
  service_tier: v.optional(nullableString),
  truncation: v.optional(v.nullable(v.picklist(["auto", "disabled"]))),
  reasoning: v.optional(v.nullable(anyObject)),
  output_text: v.optional(nullableString),
  usage: v.optional(responseUsage),
  prompt_cache_options: v.optional(anyObject),
  moderation: v.optional(v.nullable(anyObject)),
  conversation: v.optional(v.nullable(anyObject)),
  max_output_tokens: v.optional(v.nullable(int)),
});

const seq = { sequence_number: int };
const atItem = { item_id: v.string(), output_index: int, ...seq };
const atContent = { ...atItem, content_index: int };
const atSummary = { ...atItem, summary_index: int };
const outputContent = v.variant("type", [outputText, refusalContent, reasoningText]);
const responseLogProb = v.strictObject({
  token: v.string(),
  logprob: v.number(),
  top_logprobs: v.optional(
    v.array(v.strictObject({ token: v.optional(v.string()), logprob: v.optional(v.number()) })),
  ),
});

const withResponse = <T extends string>(type: T) =>
  v.strictObject({ type: v.literal(type), response: responseObject, ...seq });

/** Every Responses stream event type the gateway emits, each with its required fields. */
export const responsesEvent = v.variant("type", [
  withResponse("response.created"),
  withResponse("response.in_progress"),
  withResponse("response.completed"),
  withResponse("response.incomplete"),
  withResponse("response.failed"),
  v.strictObject({
    type: v.literal("response.output_item.added"),
    output_index: int,
    item: outputItem,
    ...seq,
  }),
  v.strictObject({
    type: v.literal("response.output_item.done"),
    output_index: int,
    item: outputItem,
    ...seq,
  }),
  v.strictObject({ type: v.literal("response.content_part.added"), part: outputContent, ...atContent }),
  v.strictObject({ type: v.literal("response.content_part.done"), part: outputContent, ...atContent }),
  v.strictObject({
    type: v.literal("response.output_text.delta"),
    delta: v.string(),
    logprobs: v.array(responseLogProb),
    obfuscation: v.optional(v.string()),
    ...atContent,
  }),
  v.strictObject({
    type: v.literal("response.output_text.done"),
    text: v.string(),
    logprobs: v.array(responseLogProb),
    ...atContent,
  }),
  v.strictObject({
    type: v.literal("response.refusal.delta"),
    delta: v.string(),
    obfuscation: v.optional(v.string()),
    ...atContent,
  }),
  v.strictObject({ type: v.literal("response.refusal.done"), refusal: v.string(), ...atContent }),
  v.strictObject({
    type: v.literal("response.function_call_arguments.delta"),
    delta: v.string(),
    obfuscation: v.optional(v.string()),
    ...atItem,
  }),
  v.strictObject({
    type: v.literal("response.function_call_arguments.done"),
    name: v.string(),
    arguments: v.string(),
    ...atItem,
  }),
  v.strictObject({
    type: v.literal("response.reasoning_summary_part.added"),
    part: summaryText,
    ...atSummary,
  }),
  v.strictObject({
    type: v.literal("response.reasoning_summary_part.done"),
    part: summaryText,
    status: v.optional(v.literal("incomplete")),
    ...atSummary,
  }),
  v.strictObject({
    type: v.literal("response.reasoning_summary_text.delta"),
    delta: v.string(),
    obfuscation: v.optional(v.string()),
    ...atSummary,
  }),
  v.strictObject({ type: v.literal("response.reasoning_summary_text.done"), text: v.string(), ...atSummary }),
  v.strictObject({
    type: v.literal("response.reasoning_text.delta"),
    delta: v.string(),
    obfuscation: v.optional(v.string()),
    ...atContent,
  }),
  v.strictObject({ type: v.literal("response.reasoning_text.done"), text: v.string(), ...atContent }),
  v.strictObject({
    type: v.literal("error"),
    code: nullableString,
    message: v.string(),
    param: nullableString,
    ...seq,
  }),
]);

// ---------------------------------------------------------------- OpenAI Chat Completions and errors

/** The OpenAI error body (ErrorResponse): every field of `error` is required. */
export const openaiError = v.strictObject({
  error: v.strictObject({
    code: nullableString,
    message: v.string(),
    param: nullableString,
    type: v.string(),
  }),
});

const tokenLogprob = v.strictObject({
  token: v.string(),
  logprob: v.number(),
  bytes: v.nullable(v.array(v.number())),
  top_logprobs: v.array(
    v.strictObject({ token: v.string(), logprob: v.number(), bytes: v.nullable(v.array(v.number())) }),
  ),
});
const chatLogprobs = v.nullable(
  v.strictObject({ content: v.nullable(v.array(tokenLogprob)), refusal: v.nullable(v.array(tokenLogprob)) }),
);
const finishReason = v.picklist(["stop", "length", "tool_calls", "content_filter", "function_call"]);

/** CompletionUsage: the three totals required, the detail objects optional but typed. */
export const completionUsage = v.strictObject({
  prompt_tokens: int,
  completion_tokens: int,
  total_tokens: int,
  prompt_tokens_details: v.optional(
    v.strictObject({
      audio_tokens: v.optional(int),
      cached_tokens: v.optional(int),
      text_tokens: v.optional(int),
      image_tokens: v.optional(int),
      cache_write_tokens: v.optional(int),
    }),
  ),
  completion_tokens_details: v.optional(
    v.strictObject({
      accepted_prediction_tokens: v.optional(int),
      audio_tokens: v.optional(int),
      reasoning_tokens: v.optional(int),
      text_tokens: v.optional(int),
      rejected_prediction_tokens: v.optional(int),
    }),
  ),
});

const chatToolCall = v.strictObject({
  id: v.string(),
  type: v.literal("function"),
  function: v.strictObject({ name: v.string(), arguments: v.string() }),
});
const chatMessage = v.strictObject({
  role: v.literal("assistant"),
  content: nullableString,
  refusal: nullableString,
  tool_calls: v.optional(v.array(chatToolCall)),
  annotations: v.optional(v.array(anyObject)),
  function_call: v.optional(v.strictObject({ name: v.string(), arguments: v.string() })),
  audio: v.optional(v.nullable(anyObject)),
});
const chatTop = {
  id: v.string(),
  created: int,
  model: v.string(),
  service_tier: v.optional(v.nullable(v.string())),
  system_fingerprint: v.optional(v.string()),
  moderation: v.optional(v.nullable(anyObject)),
};

/** CreateChatCompletionResponse; each choice requires finish_reason, index, message and logprobs. */
export const chatCompletion = v.strictObject({
  ...chatTop,
  object: v.literal("chat.completion"),
  choices: v.array(
    v.strictObject({ finish_reason: finishReason, index: int, message: chatMessage, logprobs: chatLogprobs }),
  ),
  metadata: v.optional(v.nullable(v.record(v.string(), v.string()))),
  usage: v.optional(completionUsage),
});

const chatDelta = v.strictObject({
  role: v.optional(v.picklist(["developer", "system", "user", "assistant", "tool"])),
  content: v.optional(nullableString),
  refusal: v.optional(nullableString),
  function_call: v.optional(
    v.strictObject({ name: v.optional(v.string()), arguments: v.optional(v.string()) }),
  ),
  tool_calls: v.optional(
    v.array(
      v.strictObject({
        index: int,
        id: v.optional(v.string()),
        type: v.optional(v.literal("function")),
        function: v.optional(
          v.strictObject({ name: v.optional(v.string()), arguments: v.optional(v.string()) }),
        ),
      }),
    ),
  ),
});

/** CreateChatCompletionStreamResponse; each choice requires delta, finish_reason and index. */
export const chatChunk = v.strictObject({
  ...chatTop,
  object: v.literal("chat.completion.chunk"),
  choices: v.array(
    v.strictObject({
      delta: chatDelta,
      finish_reason: v.nullable(finishReason),
      index: int,
      logprobs: v.optional(chatLogprobs),
    }),
  ),
  obfuscation: v.optional(v.string()),
  usage: v.optional(v.nullable(completionUsage)),
});

// ---------------------------------------------------------------- Anthropic Messages

const stopReason = v.picklist([
  "end_turn",
  "max_tokens",
  "stop_sequence",
  "tool_use",
  "pause_turn",
  "refusal",
  "model_context_window_exceeded",
]);
const stopDetails = v.nullable(
  v.strictObject({
    type: v.literal("refusal"),
    category: v.nullable(
      v.picklist(["cyber", "bio", "frontier_llm", "reasoning_extraction", "general_harms"]),
    ),
    explanation: nullableString,
  }),
);
const container = v.nullable(
  v.strictObject({ id: v.string(), expires_at: v.string(), skills: v.nullable(v.array(anyObject)) }),
);
const nullableCount = v.nullable(int);
const outputTokensDetails = v.nullable(v.strictObject({ thinking_tokens: int }));
const serverToolUse = v.nullable(v.strictObject({ web_fetch_requests: int, web_search_requests: int }));

/** Usage: every field required, the optional figures nullable. */
export const messagesUsage = v.strictObject({
  cache_creation: v.nullable(
    v.strictObject({ ephemeral_1h_input_tokens: int, ephemeral_5m_input_tokens: int }),
  ),
  cache_creation_input_tokens: nullableCount,
  cache_read_input_tokens: nullableCount,
  inference_geo: nullableString,
  input_tokens: int,
  output_tokens: int,
  output_tokens_details: outputTokensDetails,
  server_tool_use: serverToolUse,
  service_tier: v.nullable(v.picklist(["standard", "priority", "batch"])),
});

const caller = v.variant("type", [
  v.strictObject({ type: v.literal("direct") }),
  v.looseObject({ type: v.picklist(["code_execution_20250825", "code_execution_20260120"]) }),
]);
const textBlock = v.strictObject({
  type: v.literal("text"),
  text: v.string(),
  citations: v.nullable(v.array(anyObject)),
});
const thinkingBlock = v.strictObject({
  type: v.literal("thinking"),
  thinking: v.string(),
  signature: v.string(),
});
const redactedBlock = v.strictObject({ type: v.literal("redacted_thinking"), data: v.string() });
const toolUseBlock = v.strictObject({
  type: v.literal("tool_use"),
  id: v.string(),
  name: v.string(),
  input: anyObject,
  caller,
  toolset_name: v.optional(nullableString),
});
/** The content blocks the gateway writes (text, thinking, redacted thinking, tool use). */
export const contentBlock = v.variant("type", [textBlock, thinkingBlock, redactedBlock, toolUseBlock]);

/** The Message object. */
export const message = v.strictObject({
  id: v.string(),
  type: v.literal("message"),
  role: v.literal("assistant"),
  container,
  content: v.array(contentBlock),
  model: v.string(),
  stop_details: stopDetails,
  stop_reason: v.nullable(stopReason),
  stop_sequence: nullableString,
  usage: messagesUsage,
});

const blockDelta = v.variant("type", [
  v.strictObject({ type: v.literal("text_delta"), text: v.string() }),
  v.strictObject({ type: v.literal("input_json_delta"), partial_json: v.string() }),
  v.strictObject({ type: v.literal("thinking_delta"), thinking: v.string() }),
  v.strictObject({ type: v.literal("signature_delta"), signature: v.string() }),
  v.strictObject({ type: v.literal("citations_delta"), citation: anyObject }),
]);

const errorType = v.picklist([
  "invalid_request_error",
  "authentication_error",
  "permission_error",
  "not_found_error",
  "rate_limit_error",
  "timeout_error",
  "overloaded_error",
  "api_error",
  "billing_error",
]);

/** The Anthropic error body (ErrorResponse) as sent on HTTP errors. */
export const messagesError = v.strictObject({
  type: v.literal("error"),
  error: v.strictObject({ type: errorType, message: v.string() }),
  request_id: v.nullable(v.string()),
});

/** Every Messages stream event, each with its required fields. */
export const messagesEvent = v.variant("type", [
  v.strictObject({ type: v.literal("message_start"), message }),
  v.strictObject({ type: v.literal("content_block_start"), index: int, content_block: contentBlock }),
  v.strictObject({ type: v.literal("content_block_delta"), index: int, delta: blockDelta }),
  v.strictObject({ type: v.literal("content_block_stop"), index: int }),
  v.strictObject({
    type: v.literal("message_delta"),
    delta: v.strictObject({
      container,
      stop_details: stopDetails,
      stop_reason: v.nullable(stopReason),
      stop_sequence: nullableString,
    }),
    usage: v.strictObject({
      cache_creation_input_tokens: nullableCount,
      cache_read_input_tokens: nullableCount,
      input_tokens: nullableCount,
      output_tokens: int,
      output_tokens_details: outputTokensDetails,
      server_tool_use: serverToolUse,
    }),
  }),
  v.strictObject({ type: v.literal("message_stop") }),
  v.strictObject({ type: v.literal("ping") }),
  // A stream's error event: the documented `{type, error}`; request_id as in ErrorResponse when present.
  v.strictObject({
    type: v.literal("error"),
    error: v.strictObject({ type: errorType, message: v.string() }),
    request_id: v.optional(v.nullable(v.string())),
  }),
]);

// ---------------------------------------------------------------- checking

export type Schema = v.GenericSchema;
export type ClientProtocol = "responses" | "chat" | "messages";

/** The complete answer's schema for each client protocol. */
export const ANSWER_SCHEMAS: Record<ClientProtocol, Schema> = {
  responses: responseObject,
  chat: chatCompletion,
  messages: message,
};

/** The problems of `value` against `schema`, each as `path: message` (empty when valid). */
export function problems(schema: Schema, value: unknown): string[] {
  const result = v.safeParse(schema, value);
  if (result.success) return [];
  return (result.issues ?? []).map((issue) => `${v.getDotPath(issue) ?? "(root)"}: ${issue.message}`);
}

/** One SSE event as a client parses it. */
export interface ClientEvent {
  event: string | undefined;
  data: string;
}

/**
 * The problems of a whole stream in `protocol`, each labelled by the event's position: every event
 * against its schema (a Chat `{"error":…}` line against the OpenAI error body), the SSE event name
 * equal to the payload's type (Responses, Messages), Responses sequence numbers 0, 1, 2, … and Chat's
 * `[DONE]` only last.
 */
export function streamProblems(protocol: ClientProtocol, events: readonly ClientEvent[]): string[] {
  const out: string[] = [];
  let sequence = 0;
  events.forEach((e, i) => {
    const at = (p: string) => `event ${i} (${e.event ?? "data"}): ${p}`;
    if (e.data === "[DONE]") {
      if (protocol !== "chat" || i !== events.length - 1) out.push(at("[DONE] out of place"));
      return;
    }
    const data = JSON.parse(e.data) as Record<string, unknown>;
    if (protocol === "chat") {
      out.push(...problems("error" in data ? openaiError : chatChunk, data).map(at));
      return;
    }
    if (e.event !== data.type) out.push(at(`event name ${e.event} ≠ type ${String(data.type)}`));
    if (protocol === "messages") {
      out.push(...problems(messagesEvent, data).map(at));
      return;
    }
    out.push(...problems(responsesEvent, data).map(at));
    if (data.sequence_number !== sequence)
      out.push(at(`sequence_number ${String(data.sequence_number)}, expected ${sequence}`));
    sequence++;
  });
  return out;
}
