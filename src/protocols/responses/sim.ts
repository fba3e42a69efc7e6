// The simulator's Responses answers: the full response object and the exact SSE event sequence
// of the Responses API (created, in_progress, items with their parts and deltas, completed/incomplete).

import type { SimEvent } from "../../sim/text/pace.ts";
import type { SimPlan } from "../../sim/text/plan.ts";
import type { ResponsesRequest } from "../../wire/responses.ts";

type Item = Record<string, unknown>;

function reasoningItem(plan: SimPlan, summary: boolean, done: boolean): Item | undefined {
  const r = plan.reasoning;
  if (r === undefined) return undefined;
  const text = [{ type: "summary_text", text: r.text }];
  return {
    type: "reasoning",
    id: `rs_${plan.id}`,
    summary: done && summary ? text : [],
    ...(done ? { encrypted_content: r.signature } : {}),
  };
}

function messageItem(plan: SimPlan, done: boolean): Item {
  const text = plan.text.join("");
  return {
    type: "message",
    id: `msg_${plan.id}`,
    status: done ? (plan.stop === "length" ? "incomplete" : "completed") : "in_progress",
    role: "assistant",
    content: done ? [{ type: "output_text", text, annotations: [], logprobs: [] }] : [],
  };
}

function callItem(plan: SimPlan, done: boolean): Item | undefined {
  const call = plan.toolCall;
  if (call === undefined) return undefined;
  return {
    type: "function_call",
    id: `fc_${plan.id}`,
    call_id: call.id,
    name: call.name,
    arguments: done ? call.arguments : "",
    status: done ? "completed" : "in_progress",
  };
}

function outputOf(plan: SimPlan, summary: boolean): Item[] {
  const items = [
    reasoningItem(plan, summary, true),
    plan.toolCall ? callItem(plan, true) : messageItem(plan, true),
  ];
  return items.filter((i): i is Item => i !== undefined);
}

function usageOf(plan: SimPlan): Item {
  return {
    input_tokens: plan.inputTokens,
    input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
    output_tokens: plan.outputTokens,
    output_tokens_details: { reasoning_tokens: plan.reasoningTokens },
    total_tokens: plan.inputTokens + plan.outputTokens,
  };
}

/** The Response object; `final` false gives the in-progress shell of `response.created`. */
export function responseObject(
  req: ResponsesRequest,
  plan: SimPlan,
  createdAt: number,
  final: boolean,
): Item {
  const incomplete = plan.stop === "length";
  const summary = Boolean(req.reasoning?.summary);
  return {
    id: `resp_${plan.id}`,
    object: "response",
    created_at: createdAt,
    status: final ? (incomplete ? "incomplete" : "completed") : "in_progress",
    completed_at: final && !incomplete ? createdAt : null,
    error: null,
    incomplete_details: final && incomplete ? { reason: "max_output_tokens" } : null,
    instructions: req.instructions ?? null,
    max_output_tokens: req.max_output_tokens ?? null,
    model: req.model,
    output: final ? outputOf(plan, summary) : [],
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: req.reasoning?.effort ?? null, summary: req.reasoning?.summary ?? null },
    store: false,
    temperature: req.temperature ?? 1,
    text: req.text ?? { format: { type: "text" } },
    tool_choice: req.tool_choice ?? "auto",
    tools: req.tools ?? [],
    top_p: req.top_p ?? 1,
    truncation: "disabled",
    usage: final ? usageOf(plan) : null,
    user: null,
    metadata: {},
  };
}

function ev(type: string, fields: Item, tokens = 0): SimEvent {
  return { name: type, data: { type, ...fields }, tokens };
}

function reasoningEvents(plan: SimPlan, index: number, summary: boolean): SimEvent[] {
  const r = plan.reasoning;
  if (r === undefined) return [];
  const itemId = `rs_${plan.id}`;
  const events = [
    ev("response.output_item.added", { output_index: index, item: reasoningItem(plan, summary, false) }),
  ];
  if (summary) {
    const at = { item_id: itemId, output_index: index, summary_index: 0 };
    events.push(
      ev("response.reasoning_summary_part.added", { ...at, part: { type: "summary_text", text: "" } }),
    );
    for (const piece of r.pieces)
      events.push(ev("response.reasoning_summary_text.delta", { ...at, delta: piece }, 1));
    events.push(ev("response.reasoning_summary_text.done", { ...at, text: r.text }));
    events.push(
      ev("response.reasoning_summary_part.done", { ...at, part: { type: "summary_text", text: r.text } }),
    );
  }
  // Without a summary the thinking still takes its time: the done event carries its tokens.
  const done = ev("response.output_item.done", {
    output_index: index,
    item: reasoningItem(plan, summary, true),
  });
  return [...events, { ...done, tokens: summary ? 0 : r.pieces.length }];
}

function messageEvents(plan: SimPlan, index: number): SimEvent[] {
  const at = { item_id: `msg_${plan.id}`, output_index: index, content_index: 0 };
  const text = plan.text.join("");
  const part = { type: "output_text", text: "", annotations: [] };
  return [
    ev("response.output_item.added", { output_index: index, item: messageItem(plan, false) }),
    ev("response.content_part.added", { ...at, part }),
    ...plan.text.map((delta) => ev("response.output_text.delta", { ...at, delta, logprobs: [] }, 1)),
    ev("response.output_text.done", { ...at, text, logprobs: [] }),
    ev("response.content_part.done", { ...at, part: { ...part, text } }),
    ev("response.output_item.done", { output_index: index, item: messageItem(plan, true) }),
  ];
}

function callEvents(plan: SimPlan, index: number): SimEvent[] {
  const call = plan.toolCall;
  if (call === undefined) return [];
  const at = { item_id: `fc_${plan.id}`, output_index: index };
  return [
    ev("response.output_item.added", { output_index: index, item: callItem(plan, false) }),
    ...call.pieces.map((delta) => ev("response.function_call_arguments.delta", { ...at, delta }, 1)),
    ev("response.function_call_arguments.done", { ...at, name: call.name, arguments: call.arguments }),
    ev("response.output_item.done", { output_index: index, item: callItem(plan, true) }),
  ];
}

/** The whole event sequence, `sequence_number` from 0. */
export function responsesEvents(req: ResponsesRequest, plan: SimPlan, createdAt: number): SimEvent[] {
  const shell = responseObject(req, plan, createdAt, false);
  const summary = Boolean(req.reasoning?.summary);
  const first = plan.reasoning ? 1 : 0;
  const final = responseObject(req, plan, createdAt, true);
  const events = [
    ev("response.created", { response: shell }),
    ev("response.in_progress", { response: shell }),
    ...reasoningEvents(plan, 0, summary),
    ...(plan.toolCall ? callEvents(plan, first) : messageEvents(plan, first)),
    ev(plan.stop === "length" ? "response.incomplete" : "response.completed", { response: final }),
  ];
  return events.map((e, i) => ({ ...e, data: { ...(e.data as Item), sequence_number: i } }));
}
