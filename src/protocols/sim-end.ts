// The simulator's plan ends an answer one of three ways; each protocol names them its own way (its
// record's simulator renderers pass their names).
import type { SimPlan } from "../sim/text/plan.ts";

/** The protocol's name for why an answer ended: at the output cap, at a tool call, or by itself. */
export function endReason(plan: SimPlan, names: { length: string; toolCall: string; end: string }): string {
  if (plan.stop === "length") return names.length;
  return plan.toolCall ? names.toolCall : names.end;
}
