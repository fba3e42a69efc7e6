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
import type { IrStop, IrUsage } from "./ir.ts";
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

export function usageFromOpenAI(raw: unknown): IrUsage {
  const u = obj(raw);
  const details = obj(u.input_tokens_details ?? u.prompt_tokens_details);
  return {
    input: count(u.input_tokens ?? u.prompt_tokens),
    cached: count(details.cached_tokens),
    cacheWrite: count(details.cache_write_tokens),
    output: count(u.output_tokens ?? u.completion_tokens),
    reasoning: count(obj(u.output_tokens_details ?? u.completion_tokens_details).reasoning_tokens),
  };
}

export function usageFromAnthropic(raw: unknown): IrUsage {
  const u = obj(raw);
  const cached = count(u.cache_read_input_tokens);
  const cacheWrite = count(u.cache_creation_input_tokens);
  return {
    input: count(u.input_tokens) + cached + cacheWrite,
    cached,
    cacheWrite,
    output: count(u.output_tokens),
    reasoning: 0,
  };
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
