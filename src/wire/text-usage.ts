// The usage objects of the OpenAI and Anthropic protocols → the meter's UsageCounts (OpenAI convention: input includes
// cached tokens, output includes reasoning tokens). Anthropic's input_tokens exclude cache reads
// and cache writes; writes are split by cache lifetime (the default 5 minutes, or 1 hour) and priced
// apart. OpenAI-style usage may report writes too (`cache_write_tokens`, part of input). Anthropic
// usage also counts the server tools it ran (`server_tool_use`); OpenAI usage has no such count, the
// Responses reader counts hosted tool calls from the output items (src/protocols/responses/usage.ts).
// Where an upstream puts its usage in answers and events is read per kind (src/protocols/usage.ts).
import * as v from "valibot";
import type { ToolCalls, UsageCounts } from "./usage-counts.ts";

const Count = v.optional(v.nullable(v.number()), 0);

const InputDetails = v.looseObject({ cached_tokens: Count, cache_write_tokens: Count });

const OpenAIUsage = v.looseObject({
  input_tokens: v.optional(v.number()),
  prompt_tokens: v.optional(v.number()),
  output_tokens: v.optional(v.number()),
  completion_tokens: v.optional(v.number()),
  input_tokens_details: v.optional(v.nullable(InputDetails)),
  prompt_tokens_details: v.optional(v.nullable(InputDetails)),
  output_tokens_details: v.optional(v.nullable(v.looseObject({ reasoning_tokens: Count }))),
  completion_tokens_details: v.optional(v.nullable(v.looseObject({ reasoning_tokens: Count }))),
  /** DeepSeek's cache hits (prompt_tokens = hit + miss), where it sends no prompt_tokens_details. */
  prompt_cache_hit_tokens: v.optional(v.nullable(v.number())),
});

const AnthropicUsage = v.looseObject({
  input_tokens: Count,
  output_tokens: Count,
  cache_creation_input_tokens: v.optional(v.nullable(v.number())),
  cache_read_input_tokens: Count,
  cache_creation: v.optional(
    v.nullable(
      v.looseObject({
        ephemeral_5m_input_tokens: Count,
        ephemeral_1h_input_tokens: Count,
      }),
    ),
  ),
  server_tool_use: v.optional(
    v.nullable(v.looseObject({ web_search_requests: Count, web_fetch_requests: Count })),
  ),
});

/** Reads an OpenAI (Responses or Chat) usage object; undefined when it is not one. */
export function openaiUsage(raw: unknown): UsageCounts | undefined {
  const parsed = v.safeParse(OpenAIUsage, raw);
  if (!parsed.success) return undefined;
  const u = parsed.output;
  const input = u.input_tokens ?? u.prompt_tokens;
  const output = u.output_tokens ?? u.completion_tokens;
  if (input === undefined || output === undefined) return undefined;
  const details = u.input_tokens_details ?? u.prompt_tokens_details;
  return {
    inputTokens: input,
    cachedInputTokens: details?.cached_tokens ?? u.prompt_cache_hit_tokens ?? 0,
    cacheWriteTokens: details?.cache_write_tokens ?? 0,
    cacheWrite1hTokens: 0,
    outputTokens: output,
    reasoningTokens: (u.output_tokens_details ?? u.completion_tokens_details)?.reasoning_tokens ?? 0,
    generations: 0,
  };
}

/** Reads an Anthropic usage object (possibly partial, as in `message_delta`). */
export function anthropicUsage(raw: unknown): UsageCounts | undefined {
  const parsed = v.safeParse(AnthropicUsage, raw);
  if (!parsed.success) return undefined;
  const u = parsed.output;
  const cacheRead = u.cache_read_input_tokens ?? 0;
  const split = u.cache_creation;
  // The total is authoritative; the by-lifetime split may be absent (then every write is 5-minute).
  const writes =
    u.cache_creation_input_tokens ??
    (split?.ephemeral_5m_input_tokens ?? 0) + (split?.ephemeral_1h_input_tokens ?? 0);
  const writes1h = Math.min(split?.ephemeral_1h_input_tokens ?? 0, writes);
  const toolCalls: ToolCalls = {};
  const searches = u.server_tool_use?.web_search_requests ?? 0;
  const fetches = u.server_tool_use?.web_fetch_requests ?? 0;
  if (searches > 0) toolCalls.web_search = searches;
  if (fetches > 0) toolCalls.web_fetch = fetches;
  return {
    inputTokens: (u.input_tokens ?? 0) + cacheRead + writes,
    cachedInputTokens: cacheRead,
    cacheWriteTokens: writes - writes1h,
    cacheWrite1hTokens: writes1h,
    outputTokens: u.output_tokens ?? 0,
    reasoningTokens: 0,
    generations: 0,
    ...(searches > 0 || fetches > 0 ? { toolCalls } : {}),
  };
}
