// What one request used, in the meter's convention (src/wire/text-usage.ts converts each
// protocol's usage to it): read from upstream answers (src/protocols/<name>/usage.ts), settled by
// billing, stored in the usage record (src/store/usage/record.ts). Vocabulary every stage speaks,
// so it lives with the other shapes of the wire.

import * as v from "valibot";

/**
 * The hosted (server-side) tools whose calls the gateway counts from an upstream's answer and prices
 * per call (`[billing.tools]`): Responses `web_search_call` / `file_search_call` /
 * `image_generation_call` output items and the containers of `code_interpreter_call` items,
 * Anthropic `usage.server_tool_use.web_search_requests` / `web_fetch_requests`. An image
 * generation call is priced from the image price table by the quality and size its tool asks for,
 * a code interpreter container by its memory (src/billing/cost.ts rule 7).
 */
export const PRICED_TOOLS = [
  "web_search",
  "file_search",
  "web_fetch",
  "image_generation",
  "code_interpreter",
] as const;
export type PricedTool = (typeof PRICED_TOOLS)[number];

/** Calls of each priced hosted tool; a tool not called is absent. */
export type ToolCalls = Partial<Record<PricedTool, number>>;

/** What one request used: settled by billing (src/billing/contract.ts), stored in its usage record. */
export interface UsageCounts {
  /** Input tokens including cached ones (OpenAI convention). */
  inputTokens: number;
  /** Input tokens read from a prompt cache (part of inputTokens). */
  cachedInputTokens: number;
  /**
   * Input tokens written to a prompt cache of the default lifetime (part of inputTokens): Anthropic's
   * 5-minute writes (billed at a premium), OpenAI's `cache_write_tokens`.
   */
  cacheWriteTokens: number;
  /** Input tokens written to Anthropic's 1-hour prompt cache (part of inputTokens). */
  cacheWrite1hTokens: number;
  /** Output tokens including reasoning tokens. */
  outputTokens: number;
  reasoningTokens: number;
  /** Image generations (n × (1 + partial_images) when streaming). */
  generations: number;
  /** Hosted tool calls the upstream ran (and bills per call), by tool; absent when none ran. */
  toolCalls?: ToolCalls | undefined;
  /** Milliseconds of audio billed per minute (speech to text); absent when none. */
  audioMs?: number | undefined;
  /** Input characters billed per character (speech); absent when none. */
  characters?: number | undefined;
}

const figure = v.pipe(v.number(), v.finite());

/**
 * UsageCounts' fields as a valibot shape, for usage read back from outside the process (a journal
 * line, a cache entry another node wrote). Type checks only: a figure an upstream reported oddly (a
 * fraction of a token) was settled as it is and must read back the same.
 */
export const USAGE_COUNTS_FIELDS = {
  inputTokens: figure,
  cachedInputTokens: figure,
  cacheWriteTokens: figure,
  cacheWrite1hTokens: figure,
  outputTokens: figure,
  reasoningTokens: figure,
  generations: figure,
  toolCalls: v.optional(v.partial(v.object(Object.fromEntries(PRICED_TOOLS.map((tool) => [tool, figure]))))),
  audioMs: v.optional(figure),
  characters: v.optional(figure),
} satisfies Record<keyof UsageCounts, v.GenericSchema>;
