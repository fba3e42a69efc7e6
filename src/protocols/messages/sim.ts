// The simulator's Messages answers: the message object and the event sequence of the Messages API
// (message_start, content blocks with their deltas, message_delta with usage, message_stop).

import type { SimEvent } from "../../sim/text/pace.ts";
import type { SimPlan } from "../../sim/text/plan.ts";
import type { MessagesRequest } from "../../wire/messages.ts";
import { endReason } from "../sim-end.ts";

type Obj = Record<string, unknown>;

const STOP_REASONS = { length: "max_tokens", toolCall: "tool_use", end: "end_turn" };

function parseArgs(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    // A tool call cut by max_tokens has incomplete JSON; the real API gives an empty input then.
    return {};
  }
}

function blocks(plan: SimPlan): Obj[] {
  const out: Obj[] = [];
  if (plan.reasoning)
    out.push({ type: "thinking", thinking: plan.reasoning.text, signature: plan.reasoning.signature });
  const call = plan.toolCall;
  if (call)
    out.push({ type: "tool_use", id: `toolu_${plan.id}`, name: call.name, input: parseArgs(call.arguments) });
  else if (plan.text.length > 0 || !plan.reasoning) out.push({ type: "text", text: plan.text.join("") });
  return out;
}

function usageOf(plan: SimPlan, outputTokens: number): Obj {
  return {
    input_tokens: plan.inputTokens,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    output_tokens: outputTokens,
    service_tier: "standard",
  };
}

/** The non-stream message object. */
export function messageObject(req: MessagesRequest, plan: SimPlan): Obj {
  return {
    id: `msg_${plan.id}`,
    type: "message",
    role: "assistant",
    model: req.model,
    content: blocks(plan),
    stop_reason: endReason(plan, STOP_REASONS),
    stop_sequence: null,
    usage: usageOf(plan, plan.outputTokens),
  };
}

function ev(type: string, fields: Obj, tokens = 0): SimEvent {
  return { name: type, data: { type, ...fields }, tokens };
}

function blockEvents(plan: SimPlan): SimEvent[] {
  const events: SimEvent[] = [];
  let index = 0;
  const r = plan.reasoning;
  if (r) {
    events.push(
      ev("content_block_start", { index, content_block: { type: "thinking", thinking: "", signature: "" } }),
    );
    for (const piece of r.pieces)
      events.push(
        ev("content_block_delta", { index, delta: { type: "thinking_delta", thinking: piece } }, 1),
      );
    events.push(
      ev("content_block_delta", { index, delta: { type: "signature_delta", signature: r.signature } }),
    );
    events.push(ev("content_block_stop", { index }));
    index++;
  }
  const call = plan.toolCall;
  if (call) {
    const start = { type: "tool_use", id: `toolu_${plan.id}`, name: call.name, input: {} };
    events.push(ev("content_block_start", { index, content_block: start }));
    events.push(ev("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: "" } }));
    for (const piece of call.pieces)
      events.push(
        ev("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: piece } }, 1),
      );
    events.push(ev("content_block_stop", { index }));
  } else if (plan.text.length > 0 || !r) {
    events.push(ev("content_block_start", { index, content_block: { type: "text", text: "" } }));
    events.push({ name: "ping", data: { type: "ping" }, tokens: 0 });
    for (const piece of plan.text)
      events.push(ev("content_block_delta", { index, delta: { type: "text_delta", text: piece } }, 1));
    events.push(ev("content_block_stop", { index }));
  }
  return events;
}

/** The whole event sequence of a streamed message. */
export function messagesEvents(req: MessagesRequest, plan: SimPlan): SimEvent[] {
  const start = { ...messageObject(req, plan), content: [], stop_reason: null, usage: usageOf(plan, 1) };
  return [
    ev("message_start", { message: start }),
    ...blockEvents(plan),
    ev("message_delta", {
      delta: { stop_reason: endReason(plan, STOP_REASONS), stop_sequence: null },
      usage: { ...usageOf(plan, plan.outputTokens), service_tier: undefined },
    }),
    ev("message_stop", {}),
  ];
}
