// Thinking and sampling toward an Anthropic Messages upstream, for translated requests: the
// thinking form each model takes (catalog `thinking`: adaptive with `output_config.effort`, or
// `enabled` with a budget), when thinking must be off for a turn, and which sampling field is sent.
import type { AnthropicThinking } from "../../catalog/models.ts";
import type { IrReasoning, IrRequest } from "../text-form.ts";
import { arr, type Obj, obj } from "./narrow.ts";

/** Thinking budgets used for an OpenAI effort. */
const BUDGETS: Readonly<Record<string, number>> = {
  minimal: 1024,
  low: 2048,
  medium: 8192,
  high: 16384,
  xhigh: 32768,
  max: 32768,
};

/** Sampling for models that take it: temperature (capped at the API's 1) wins over top_p. */
export function sampling(ir: IrRequest, model: AnthropicThinking): Obj {
  if (!model.sampling) return {};
  if (ir.temperature !== undefined) return { temperature: Math.min(1, ir.temperature) };
  return ir.topP === undefined ? {} : { top_p: ir.topP };
}

/**
 * True when thinking must be off for this turn: tool_choice forces a tool (the API refuses both;
 * the forced choice is the client's explicit instruction, so it wins), or the assistant turn that a
 * tool result answers has no thinking block to send back (the API requires it while thinking is on).
 */
export function thinkingBarred(ir: IrRequest, messages: Obj[]): boolean {
  if (ir.tools.length > 0 && (ir.toolChoice.mode === "required" || ir.toolChoice.mode === "named"))
    return true;
  const last = messages.at(-1);
  const answersTools = arr(last?.content).some((b) => obj(b).type === "tool_result");
  if (last?.role !== "user" || !answersTools) return false;
  const first = obj(arr(messages.at(-2)?.content)[0]).type;
  return first !== "thinking" && first !== "redacted_thinking";
}

/** The highest effort the model takes that is not above the wanted one. */
function effortFor(wanted: string, accepted: readonly string[]): string | undefined {
  const order = ["low", "medium", "high", "xhigh", "max"];
  const rank = Math.max(0, order.indexOf(wanted === "minimal" ? "low" : wanted));
  return accepted.filter((e) => order.indexOf(e) <= rank).at(-1);
}

/** `thinking` (and `output_config.effort`) in the model's form; empty when thinking is off. */
export function thinkingFields(r: IrReasoning, maxTokens: number, model: AnthropicThinking): Obj {
  const budget = thinkingBudget(r, maxTokens);
  if (budget === undefined) return {};
  if (model.form === "budget") return { thinking: { type: "enabled", budget_tokens: budget } };
  const effort = effortFor(r.effort ?? effortForBudgetName(budget), model.efforts);
  return {
    // Opus 4.7 omits thinking text unless asked: ask for it when the client wants it readable.
    thinking: { type: "adaptive", ...(r.summary ? { display: "summarized" } : {}) },
    ...(effort === undefined ? {} : { effort }),
  };
}

function effortForBudgetName(budget: number): string {
  const found = Object.entries(BUDGETS).find(([, b]) => budget <= b);
  return found?.[0] ?? "high";
}

function thinkingBudget(r: IrReasoning, maxTokens: number): number | undefined {
  const wanted = r.budgetTokens ?? BUDGETS[r.effort ?? "medium"] ?? 8192;
  const budget = Math.min(wanted, maxTokens - 1);
  return budget >= 1024 ? budget : undefined;
}
