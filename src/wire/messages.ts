// Anthropic Messages wire format (`POST /v1/messages`, `/v1/messages/count_tokens`): the version
// header rule, the request schemas (loose, unknown fields kept) and their decode (the conversions
// to the internal form are in translate/messages-request.ts), and the one change a same-protocol upstream needs: mid-conversation system messages moved into the
// top-level `system` (the API takes only user and assistant roles in `messages`).
import * as v from "valibot";
import { parseOrThrow } from "./decode.ts";
import { GatewayError } from "./errors.ts";
import { checkSampling, JsonObject, PositiveInt, requireObject, SamplingFields } from "./text-fields.ts";

/** The version the gateway documents; SDKs send later dates, which are accepted and passed on. */
export const DEFAULT_VERSION = "2023-06-01";
const VERSION_FORMAT = /^\d{4}-\d{2}-\d{2}$/;

/** Reads `modelz-version` or `anthropic-version` (same header); missing or malformed → 400. */
export function requireVersion(headers: Headers): string {
  const value = headers.get("modelz-version") ?? headers.get("anthropic-version");
  if (value === null) {
    throw new GatewayError(
      "invalid_request",
      `The version header is missing: send \`modelz-version: ${DEFAULT_VERSION}\` (or \`anthropic-version\`, which the official SDKs send).`,
      { param: "modelz-version" },
    );
  }
  if (!VERSION_FORMAT.test(value.trim())) {
    throw new GatewayError(
      "invalid_request",
      `The version header has a malformed value "${value}": expected a date such as ${DEFAULT_VERSION}.`,
      { param: "modelz-version" },
    );
  }
  return value.trim();
}

const Block = v.looseObject({ type: v.string() });
const Message = v.looseObject({
  role: v.picklist(["user", "assistant", "system"]),
  content: v.union([v.string(), v.array(Block)]),
});
const Tool = v.looseObject({
  name: v.string(),
  description: v.optional(v.string()),
  input_schema: v.optional(JsonObject),
});
const Thinking = v.variant("type", [
  v.looseObject({ type: v.literal("enabled"), budget_tokens: PositiveInt }),
  v.looseObject({ type: v.literal("disabled") }),
  v.looseObject({ type: v.literal("adaptive") }),
]);

const Common = {
  model: v.string(),
  messages: v.array(Message),
  system: v.optional(v.union([v.string(), v.array(Block)])),
  tools: v.optional(v.array(Tool)),
  tool_choice: v.optional(
    v.looseObject({ type: v.picklist(["auto", "any", "tool", "none"]), name: v.optional(v.string()) }),
  ),
  thinking: v.optional(Thinking),
  output_config: v.optional(
    v.looseObject({
      effort: v.optional(v.string()),
      format: v.optional(v.looseObject({ type: v.literal("json_schema"), schema: JsonObject })),
    }),
  ),
};

export const MessagesRequestSchema = v.looseObject({
  ...Common,
  max_tokens: PositiveInt,
  ...SamplingFields,
  stream: v.optional(v.boolean()),
});
export const CountTokensRequestSchema = v.looseObject(Common);

export type MessagesRequest = v.InferOutput<typeof MessagesRequestSchema>;
export type CountTokensRequest = v.InferOutput<typeof CountTokensRequestSchema>;

/** The beta that lets thinking continue between tool calls (its budget then spans the whole turn). */
export const INTERLEAVED_THINKING_BETA = "interleaved-thinking-2025-05-14";

/** Whether an `anthropic-beta` header value lists `beta` (the header is a comma-separated list). */
export function hasBeta(header: string | null | undefined, beta: string): boolean {
  return (header ?? "").split(",").some((part) => part.trim() === beta);
}

/**
 * Checks a parsed body: shape (400), thinking budget (400), sampling ranges (422). The budget rule
 * is the provider's: at least 1024, and below `max_tokens` — except with interleaved thinking
 * (its beta, and tools to think between), where the budget is the whole turn's across several
 * answers and may exceed one answer's `max_tokens`.
 */
export function decodeMessagesRequest(json: unknown, anthropicBeta?: string | null): MessagesRequest {
  const request = parseOrThrow(MessagesRequestSchema, requireObject(json));
  const thinking = request.thinking;
  if (thinking?.type === "enabled") {
    const budget = thinking.budget_tokens as number;
    const interleaved = hasBeta(anthropicBeta, INTERLEAVED_THINKING_BETA) && (request.tools?.length ?? 0) > 0;
    if (budget < 1024 || (budget >= request.max_tokens && !interleaved)) {
      throw new GatewayError(
        "invalid_request",
        `thinking.budget_tokens must be at least 1024 and less than max_tokens (${request.max_tokens}), got ${budget}${budget < 1024 ? "" : `; with tools and the anthropic-beta ${INTERLEAVED_THINKING_BETA} it may exceed max_tokens`}`,
        { param: "thinking.budget_tokens" },
      );
    }
  }
  checkSampling(request);
  return request;
}

export function decodeCountTokensRequest(json: unknown): CountTokensRequest {
  return parseOrThrow(CountTokensRequestSchema, requireObject(json));
}

type SystemBlock = Record<string, unknown>;

function systemBlocks(content: unknown): SystemBlock[] {
  if (typeof content === "string") return content === "" ? [] : [{ type: "text", text: content }];
  return Array.isArray(content) ? (content as SystemBlock[]) : [];
}

/**
 * For a request with `role: "system"` messages: the fields to forward instead, `messages` without
 * them and `system` with their text appended in order (a string stays a string when every part is
 * one; otherwise text blocks, the client's blocks and their cache_control marks kept as sent).
 * Undefined when there is nothing to move, so the client's bytes are forwarded untouched.
 */
export function systemOverrides(request: CountTokensRequest): Record<string, unknown> | undefined {
  const moved = request.messages.filter((m) => m.role === "system");
  if (moved.length === 0) return undefined;
  const messages = request.messages.filter((m) => m.role !== "system");
  const parts = [request.system, ...moved.map((m) => m.content)].filter((p) => p !== undefined);
  if (parts.every((p) => typeof p === "string")) {
    return { messages, system: parts.filter((p) => p !== "").join("\n\n") };
  }
  return { messages, system: parts.flatMap(systemBlocks) };
}
