// Budgets on the command line: `--budget PERIOD=USD` and `--remove PERIOD` read into a change, and
// a key's or an account's budgets shown in their current periods (the periods of the configured
// calendar; spent from the store's usage records; the reservations of requests in flight are held
// by the running gateway only, so the admin API shows them and this does not).
import { applyBudgets } from "../admin/schemas.ts";
import { formatUsd } from "../base/money.ts";
import type { Nanos } from "../base/types.ts";
import type { Config } from "../config/schema.ts";
import { BillingDay } from "../limits/day.ts";
import { BUDGET_PERIODS, type BudgetPeriod, calendarOf } from "../limits/periods.ts";
import type { Budgets } from "../store/sqlite/schema.ts";
import type { Store } from "../store/store.ts";
import { usd } from "./flag-values.ts";
import { table } from "./table.ts";
import { UsageError } from "./usage-error.ts";

function period(text: string, flag: string): BudgetPeriod {
  if ((BUDGET_PERIODS as readonly string[]).includes(text)) return text as BudgetPeriod;
  throw new UsageError(`${flag}: unknown period "${text}"; use one of ${BUDGET_PERIODS.join(", ")}`);
}

/** `--budget weekly=20 --remove monthly` as a change: a period set, or removed (null). */
export function budgetChange(sets: string[], removes: string[]): Partial<Record<BudgetPeriod, Nanos | null>> {
  const change: Partial<Record<BudgetPeriod, Nanos | null>> = {};
  for (const given of sets) {
    const [name, amount, extra] = given.split("=");
    if (name === undefined || amount === undefined || extra !== undefined)
      throw new UsageError(`--budget: expected PERIOD=USD such as weekly=20, got "${given}"`);
    change[period(name, "--budget")] = usd(amount, `--budget ${name}`);
  }
  for (const name of removes) change[period(name, "--remove")] = null;
  return change;
}

/** Stored budgets with a change applied (null when none is left); the admin API applies them alike. */
export const withChange = applyBudgets;

/** Prints budgets in their current periods, with what the store holds as spent in each. */
export async function printBudgets(
  store: Store,
  config: Config,
  budgets: Budgets,
  spentOf: (spending: { byKey: Map<string, number>; byAccount: Map<number, number> }) => number,
  json: boolean | undefined,
  /** A key's daily budget is its daily cap, counted in the billing day rather than the calendar's. */
  dailyIsCap = false,
): Promise<void> {
  const calendar = calendarOf(config.billing.budgets);
  const billingDay = new BillingDay(config.billing.day_utc_offset_minutes);
  const now = Date.now();
  const rows = [];
  for (const name of BUDGET_PERIODS) {
    const limit = budgets[name];
    if (limit === undefined) continue;
    const { start, end } =
      name === "daily" && dailyIsCap
        ? { start: billingDay.start(now), end: billingDay.end(now) }
        : calendar.bounds(name, now);
    const spent = spentOf(await store.admin.spending(start));
    rows.push({
      period: name,
      limit_usd: formatUsd(limit as Nanos),
      spent_usd: formatUsd(spent as Nanos),
      remaining_usd: formatUsd(Math.max(0, limit - spent) as Nanos),
      period_start: new Date(start).toISOString(),
      period_end: name === "total" ? null : new Date(end).toISOString(),
    });
  }
  console.log(
    json
      ? JSON.stringify(rows)
      : rows.length === 0
        ? "no budgets"
        : table(rows, ["period", "limit_usd", "spent_usd", "remaining_usd", "period_start", "period_end"]),
  );
}
