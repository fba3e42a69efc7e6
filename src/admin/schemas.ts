// valibot schemas of admin API inputs shared by several resources: times, names, counts, and the
// amounts, CIDRs and model patterns the config reads the same way (src/config/blocks.ts).
import * as v from "valibot";

import { PrintableName, UsdNanos } from "../config/blocks.ts";
import type { Budgets } from "../store/sqlite/schema.ts";

export { Cidr, ModelPattern, UsdNanos as Usd } from "../config/blocks.ts";

/**
 * Budgets by period as the admin API takes them: a USD amount sets the period's budget, null
 * removes it, a period left out stays as it is; an unknown period is refused.
 */
export const BudgetsInput = v.strictObject({
  daily: v.optional(v.nullable(UsdNanos)),
  weekly: v.optional(v.nullable(UsdNanos)),
  monthly: v.optional(v.nullable(UsdNanos)),
  total: v.optional(v.nullable(UsdNanos)),
});

export type BudgetsChange = v.InferOutput<typeof BudgetsInput>;

/** Stored budgets with a change applied (null when none is left). */
export function applyBudgets(current: Budgets | null, change: BudgetsChange): Budgets | null {
  const next: Budgets = { ...current };
  for (const [period, value] of Object.entries(change) as [keyof Budgets, number | null | undefined][]) {
    if (value === null) delete next[period];
    else if (value !== undefined) next[period] = value;
  }
  return Object.keys(next).length > 0 ? next : null;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** A future RFC 3339 time, turned into ms since the epoch. */
export const FutureTime = v.pipe(
  v.string(),
  v.regex(RFC3339, "expected an RFC 3339 time such as 2027-01-31T00:00:00Z"),
  v.transform(Date.parse),
  v.check((at) => at > Date.now(), "is in the past; give a future time"),
);

/** The name of an account or a group: printable, not empty. */
export const Name = v.pipe(PrintableName, v.trim(), v.minLength(1, "must not be empty"), v.maxLength(100));

/** A key's name: printable, may be empty. */
export const KeyName = v.pipe(PrintableName, v.maxLength(100));

export const PositiveInt = v.pipe(v.number(), v.integer("expected a whole number"), v.minValue(1));
