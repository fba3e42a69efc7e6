// OpenAI Chat Completions wire format (`POST /v1/chat/completions`): the request schema (loose,
// unknown fields kept) and its decode; its conversions to the internal form are in
// translate/chat-request.ts.
import * as v from "valibot";
import { GatewayError } from "./errors.ts";
import * as fields from "./text-fields.ts";

/**
 * Most choices one Chat request may ask for (`n`). Each choice can produce up to the output limit,
 * so admission reserves for `n` times that; the cap keeps one request's reservation bounded.
 */
export const MAX_CHAT_CHOICES = 8;

const Choices = v.optional(
  v.nullable(
    v.pipe(v.number("n must be a number of choices"), v.integer("n must be a whole number of choices")),
  ),
);

/** `n` outside 1..MAX_CHAT_CHOICES is a 422 naming the limit. */
function checkChoices(n: number | null | undefined): void {
  if (n === null || n === undefined || (n >= 1 && n <= MAX_CHAT_CHOICES)) return;
  throw new GatewayError(
    "invalid_value",
    `n must be between 1 and ${MAX_CHAT_CHOICES}, got ${n}: this gateway reserves credit for every choice, so ask for at most ${MAX_CHAT_CHOICES} per request.`,
    { param: "n" },
  );
}

const Content = v.union([v.string(), v.array(v.looseObject({ type: v.string() }))]);

const ToolCall = v.looseObject({
  id: v.string(),
  type: v.optional(v.string()),
  function: v.looseObject({ name: v.string(), arguments: v.string() }),
});

const Message = v.variant("role", [
  v.looseObject({ role: v.picklist(["system", "developer", "user"]), content: Content }),
  v.looseObject({
    role: v.literal("assistant"),
    content: v.optional(v.nullable(Content)),
    tool_calls: v.optional(v.nullable(v.array(ToolCall))),
  }),
  v.looseObject({ role: v.literal("tool"), tool_call_id: v.string(), content: Content }),
]);

const FunctionTool = v.looseObject({
  type: v.literal("function"),
  function: v.looseObject({
    name: v.string(),
    description: v.optional(v.nullable(v.string())),
    parameters: v.optional(v.nullable(fields.JsonObject)),
  }),
});

export const ChatRequestSchema = v.looseObject({
  model: v.string(),
  messages: v.pipe(v.array(Message), v.minLength(1, "messages must hold at least one message")),
  ...fields.SamplingFields,
  max_tokens: v.optional(v.nullable(fields.PositiveInt)),
  max_completion_tokens: v.optional(v.nullable(fields.PositiveInt)),
  n: Choices,
  reasoning_effort: v.optional(v.nullable(fields.Effort)),
  stream: v.optional(v.nullable(v.boolean())),
  stream_options: v.optional(
    v.nullable(v.looseObject({ include_usage: v.optional(v.nullable(v.boolean())) })),
  ),
  tools: v.optional(v.nullable(v.array(FunctionTool))),
  tool_choice: v.optional(
    v.nullable(
      v.union([
        v.picklist(["none", "auto", "required"]),
        v.looseObject({ type: v.string(), function: v.optional(v.looseObject({ name: v.string() })) }),
      ]),
    ),
  ),
  response_format: fields.ResponseFormat,
});

export type ChatRequest = v.InferOutput<typeof ChatRequestSchema>;

/** Checks a parsed JSON body: nested reasoning (400 upstream_error), shape (400), ranges (422). */
export function decodeChatRequest(json: unknown): ChatRequest {
  const request = fields.decodeOpenAIText(ChatRequestSchema, json, {
    field: "reasoning",
    hint: 'on /v1/chat/completions the effort is a top-level string: send `"reasoning_effort": "high"`.',
  });
  checkChoices(request.n);
  return request;
}
