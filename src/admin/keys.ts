// Operator actions on keys, shared by the CLI and the admin API (its first-key bootstrap included).
import { issueSecret } from "../auth/secret.ts";
import type { Nanos } from "../base/types.ts";
import type { BudgetFigure, MeteredKey } from "../billing/contract.ts";
import type { Budgets } from "../store/sqlite/schema.ts";
import type { KeyRecord, Store } from "../store/store.ts";
import { isoTime, isoTimeOrNull } from "./view.ts";

export interface CreateKeyInput {
  account: string;
  group: string;
  name: string;
  expiresAt: number | null;
  allowIps: string[];
  dailyCap: Nanos | null;
  rpm: number | null;
  concurrency: number | null;
  tpm: number | null;
  /** Weekly, monthly and total budgets (nano-USD by period; the daily one is dailyCap). */
  budgets?: Budgets | null;
}

/** Effective status: a key past its expiry time is `expired` whatever its stored status. */
export type EffectiveStatus = "enabled" | "revoked" | "expired";

export function effectiveStatus(key: KeyRecord, now = Date.now()): EffectiveStatus {
  if (key.status === "revoked") return "revoked";
  if (key.expiresAt !== null && key.expiresAt <= now) return "expired";
  return "enabled";
}

/** Creates a key (input already validated) and returns it with its secret, which exists only in this return value. */
export async function createKey(
  store: Store,
  input: CreateKeyInput,
): Promise<{ key: KeyRecord; secret: string }> {
  const issued = issueSecret();
  const key = await store.createKey({
    id: issued.id,
    account: input.account,
    group: input.group,
    name: input.name,
    prefix: issued.prefix,
    secretHash: issued.secretHash,
    expiresAt: input.expiresAt,
    allowIps: input.allowIps.length > 0 ? input.allowIps : null,
    dailyCap: input.dailyCap,
    rpm: input.rpm,
    concurrency: input.concurrency,
    tpm: input.tpm,
    budgets: input.budgets ?? null,
  });
  return { key, secret: issued.secret };
}

/** What the meter needs to read a key's budgets (and its account's) from a stored key. */
export function meteredOf(key: KeyRecord): MeteredKey {
  return {
    keyId: key.id,
    keyName: key.name,
    accountId: key.accountId,
    accountName: key.account,
    group: key.group,
    dailyCap: key.dailyCap,
    rpm: key.rpm,
    concurrency: key.concurrency,
    tpm: key.tpm,
    budgets: key.budgets,
    accountBudgets: key.accountBudgets,
  };
}

/** A budget in its current period as the admin API and the CLI show it (times as ISO strings). */
export function budgetView(figure: BudgetFigure) {
  return {
    period: figure.period,
    limit_nanos: figure.limit,
    spent_nanos: figure.spent,
    reserved_nanos: figure.reserved,
    remaining_nanos: figure.remaining,
    period_start: new Date(figure.start).toISOString(),
    period_end: figure.end === null ? null : new Date(figure.end).toISOString(),
  };
}

/** The operator's view of a key, as `keys list --json` prints it (the status as of now). */
export function keyView(key: KeyRecord) {
  return {
    id: key.id,
    prefix: key.prefix,
    name: key.name,
    account: key.account,
    group: key.group,
    status: effectiveStatus(key),
    expires_at: isoTimeOrNull(key.expiresAt),
    allow_ips: key.allowIps ?? [],
    daily_cap_nanos: key.dailyCap,
    rpm: key.rpm,
    concurrency: key.concurrency,
    tpm: key.tpm,
    created_at: isoTime(key.createdAt),
    last_used_at: isoTimeOrNull(key.lastUsedAt),
  };
}
