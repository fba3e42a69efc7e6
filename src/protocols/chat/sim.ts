// The simulator's Chat Completions answers: the completion object and the chunk stream of
// the Chat Completions stream (role chunk, content or tool-call chunks, finish chunk, usage chunk, [DONE]).

import type { SimEvent } from "../../sim/text/pace.ts";
import type { SimPlan } from "../../sim/text/plan.ts";
import type { ChatRequest } from "../../wire/chat.ts";
import { endReason } from "../sim-end.ts";

type Obj = Record<string, unknown>;

const FINISH_REASONS = { length: "length", toolCall: "tool_calls", end: "stop" };

function usageOf(plan: SimPlan): Obj {
  return {
    prompt_tokens: plan.inputTokens,
    completion_tokens: plan.outputTokens,
    total_tokens: plan.inputTokens + plan.outputTokens,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: plan.reasoningTokens,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

/** The non-stream `chat.completion` object. */
export function chatCompletion(req: ChatRequest, plan: SimPlan, created: number): Obj {
  const call = plan.toolCall;
  const message: Obj = {
    role: "assistant",
    content: call ? null : plan.text.join(""),
    refusal: null,
    annotations: [],
  };
  if (call)
    message.tool_calls = [
      { id: call.id, type: "function", function: { name: call.name, arguments: call.arguments } },
    ];
  return {
    id: `chatcmpl-${plan.id}`,
    object: "chat.completion",
    created,
    model: req.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: endReason(plan, FINISH_REASONS) }],
    usage: usageOf(plan),
    service_tier: "default",
    system_fingerprint: "fp_modelgate_sim",
  };
}

/** The chunk stream, ending with `data: [DONE]`. */
export function chatEvents(req: ChatRequest, plan: SimPlan, created: number): SimEvent[] {
  const head = {
    id: `chatcmpl-${plan.id}`,
    object: "chat.completion.chunk",
    created,
    model: req.model,
    system_fingerprint: "fp_modelgate_sim",
  };
  const usage = req.stream_options?.include_usage === true ? { usage: null } : {};
  const chunk = (delta: Obj, tokens: number, finish: string | null = null): SimEvent => ({
    name: undefined,
    data: { ...head, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...usage },
    tokens,
  });
  const call = plan.toolCall;
  // Reasoning is not shown on Chat, but it still takes time before the first visible token.
  const events = [
    chunk({ role: "assistant", content: call ? null : "", refusal: null }, plan.reasoningTokens),
  ];
  if (call) {
    events.push(
      chunk(
        {
          tool_calls: [
            { index: 0, id: call.id, type: "function", function: { name: call.name, arguments: "" } },
          ],
        },
        0,
      ),
    );
    for (const piece of call.pieces)
      events.push(chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] }, 1));
  } else {
    for (const piece of plan.text) events.push(chunk({ content: piece }, 1));
  }
  events.push(chunk({}, 0, endReason(plan, FINISH_REASONS)));
  if (req.stream_options?.include_usage === true) {
    events.push({ name: undefined, data: { ...head, choices: [], usage: usageOf(plan) }, tokens: 0 });
  }
  events.push({ name: undefined, data: "[DONE]", tokens: 0 });
  return events;
}
