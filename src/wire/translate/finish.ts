// Stop reasons and usage between each protocol and the internal form.
//   internal   Responses                          Chat             Messages
//   end        completed                          stop             end_turn (pause_turn read as end)
//   length     incomplete / max_output_tokens     length           max_tokens
//   tool       completed with function_call       tool_calls       tool_use
//   stop_seq   completed (no equivalent)          stop             stop_sequence
//   refusal    incomplete / content_filter        content_filter   refusal
// A refusal part with an ordinary end (OpenAI refuses with finish_reason `stop` / status
// `completed`) is written to Messages as `refusal`, the only way Messages can say it.
// Usage: OpenAI input includes cached and cache-written tokens (`cache_write_tokens`); Anthropic
// input_tokens excludes cache reads and writes, so they are added on the way in and subtracted on
// the way out. Reasoning tokens exist only on the OpenAI side (Anthropic counts thinking inside
// output_tokens): 0 when unknown, and then no output_tokens_details toward Messages.
import { type IrStop, type IrUsage, ZERO_USAGE } from "../text-form.ts";
import { anthropicUsage, openaiUsage } from "../text-usage.ts";
import type { UsageCounts } from "../usage-counts.ts";
import { count, type Obj, obj } from "./narrow.ts";

export function stopFromChat(reason: unknown): IrStop {
  if (reason === "length") return "length";
  if (reason === "tool_calls" || reason === "function_call") return "tool";
  if (reason === "content_filter") return "refusal";
  return "end";
}

export function stopToChat(stop: IrStop): string {
  const map: Record<IrStop, string> = {
    end: "stop",
    stop_sequence: "stop",
    length: "length",
    tool: "tool_calls",
    refusal: "content_filter",
  };
  return map[stop];
}

export function stopFromMessages(reason: unknown): IrStop {
  if (reason === "max_tokens" || reason === "model_context_window_exceeded") return "length";
  if (reason === "tool_use") return "tool";
  if (reason === "stop_sequence") return "stop_sequence";
  if (reason === "refusal") return "refusal";
  return "end";
}

/** `refused`: the reply holds a refusal part, which Messages can only say through its stop reason. */
export function stopToMessages(stop: IrStop, refused = false): string {
  if (refused && stop === "end") return "refusal";
  const map: Record<IrStop, string> = {
    end: "end_turn",
    stop_sequence: "stop_sequence",
    length: "max_tokens",
    tool: "tool_use",
    refusal: "refusal",
  };
  return map[stop];
}

/** Responses: a stop from the final status, its incomplete reason and whether tools were called. */
export function stopFromResponses(response: Obj, calledTool: boolean): IrStop {
  if (response.status === "incomplete") {
    return obj(response.incomplete_details).reason === "content_filter" ? "refusal" : "length";
  }
  return calledTool ? "tool" : "end";
}

/** Billing's reading of usage (src/wire/text-usage.ts) as internal usage: what a client is told is what it is billed. */
function irUsage(u: UsageCounts | undefined): IrUsage {
  if (u === undefined) return ZERO_USAGE;
  return {
    input: count(u.inputTokens),
    cached: count(u.cachedInputTokens),
    cacheWrite: count(u.cacheWriteTokens) + count(u.cacheWrite1hTokens),
    output: count(u.outputTokens),
    reasoning: count(u.reasoningTokens),
  };
}

/** OpenAI (Responses or Chat) usage, DeepSeek's `prompt_cache_hit_tokens` included; zero when none. */
export function usageFromOpenAI(raw: unknown): IrUsage {
  return irUsage(openaiUsage(raw));
}

/** Anthropic usage; cache writes from the total, or from the by-lifetime split when only that is sent. */
export function usageFromAnthropic(raw: unknown): IrUsage {
  return irUsage(anthropicUsage(raw));
}

export function usageToResponses(u: IrUsage): Obj {
  return {
    input_tokens: u.input,
    input_tokens_details: { cached_tokens: u.cached, cache_write_tokens: u.cacheWrite },
    output_tokens: u.output,
    output_tokens_details: { reasoning_tokens: u.reasoning },
    total_tokens: u.input + u.output,
  };
}

export function usageToChat(u: IrUsage): Obj {
  return {
    prompt_tokens: u.input,
    completion_tokens: u.output,
    total_tokens: u.input + u.output,
    prompt_tokens_details: { cached_tokens: u.cached, cache_write_tokens: u.cacheWrite },
    completion_tokens_details: { reasoning_tokens: u.reasoning },
  };
}

/**
 * Anthropic usage with every field the official Usage type declares (unknown ones null): the
 * cache write split by lifetime and server-tool counts are not known across protocols, and
 * thinking tokens only when an OpenAI upstream counted reasoning.
 */
export function usageToAnthropic(u: IrUsage): Obj {
  return {
    input_tokens: Math.max(0, u.input - u.cached - u.cacheWrite),
    cache_creation_input_tokens: u.cacheWrite,
    cache_read_input_tokens: u.cached,
    cache_creation: null,
    output_tokens: u.output,
    output_tokens_details: u.reasoning > 0 ? { thinking_tokens: u.reasoning } : null,
    server_tool_use: null,
    service_tier: null,
    inference_geo: null,
  };
}

/** The usage of a Messages `message_delta` event (the official MessageDeltaUsage fields). */
export function deltaUsageToAnthropic(u: IrUsage): Obj {
  const { cache_creation: _c, service_tier: _s, inference_geo: _g, ...delta } = usageToAnthropic(u);
  return delta;
}
