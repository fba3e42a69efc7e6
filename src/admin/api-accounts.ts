// /admin/v1/accounts and /admin/v1/groups: list, create, credit (a ledger entry with its note),
// and set a group's models. Accounts show their balance and what they spent today.
import * as v from "valibot";
import { formatUsd, nanos } from "../base/money.ts";
import { startOfUtcDay } from "../base/time.ts";
import { toKeyId } from "../base/types.ts";
import type { MeteredKey } from "../billing/contract.ts";
import type { Gateway } from "../gateway.ts";
import { type Account, type Group, StoreError } from "../store/store.ts";
import { adminRoute, readJson } from "./http.ts";
import { budgetView } from "./keys.ts";
import { applyBudgets, BudgetsInput, ModelPattern, Name, Usd } from "./schemas.ts";
import { isoTime } from "./view.ts";

const CreateAccount = v.strictObject({
  name: Name,
  balance_usd: v.optional(Usd, "0"),
});

const Credit = v.strictObject({
  amount_usd: v.pipe(
    Usd,
    v.check((n) => n > 0, "must be more than 0"),
  ),
  note: v.pipe(v.string(), v.trim(), v.minLength(1, "say why the account is credited"), v.maxLength(500)),
});

const SetGroup = v.strictObject({
  models: v.pipe(v.array(ModelPattern), v.minLength(1, "give at least one model id or pattern")),
});

/** An account with its balance and what it spent today (UTC). */
export function accountView(account: Account, spentToday: number) {
  return {
    id: account.id,
    name: account.name,
    balance_nanos: account.balance,
    balance_usd: formatUsd(account.balance),
    spent_today_nanos: spentToday,
    created_at: isoTime(account.createdAt),
  };
}

/** A group: the models its keys may call. */
export function groupView(group: Group) {
  return { id: group.id, name: group.name, models: group.modelPatterns };
}

export const listAccounts = adminRoute(async ({ gateway }) => {
  const { byAccount } = await gateway.store.admin.spending(startOfUtcDay());
  const accounts = await gateway.store.listAccounts();
  return { object: "list", data: accounts.map((a) => accountView(a, byAccount.get(a.id) ?? 0)) };
});

export const createAccount = adminRoute(async ({ ctx, gateway, actor }) => {
  const input = await readJson(ctx, CreateAccount);
  const account = await gateway.store.createAccount(input.name, nanos(input.balance_usd));
  await gateway.store.admin.audit(actor, "account.create", account.name, {
    balance_nanos: account.balance,
  });
  return accountView(account, 0);
}, 201);

/** An account's budgets in their current periods, read through the meter (404 for an unknown account). */
async function accountBudgets(gateway: Gateway, name: string) {
  const account = (await gateway.store.listAccounts()).find((a) => a.name === name);
  if (!account) throw new StoreError("not_found", `account "${name}" does not exist`);
  const figures = gateway.meter.budgetFigures;
  const metered: MeteredKey = {
    keyId: toKeyId(""),
    keyName: "",
    accountId: account.id,
    accountName: account.name,
    group: "",
    dailyCap: null,
    rpm: null,
    concurrency: null,
    tpm: null,
    budgets: null,
    accountBudgets: account.budgets,
  };
  const data = figures ? (await figures.call(gateway.meter, metered, "account")).map(budgetView) : [];
  return { object: "list", account: account.name, data };
}

export const getAccountBudgets = adminRoute(async ({ gateway, params }) =>
  accountBudgets(gateway, params.name ?? ""),
);

/** Sets or removes an account's budgets: every node applies the change at its next revision check. */
export const setAccountBudgets = adminRoute(async ({ ctx, gateway, actor, params }) => {
  const name = params.name ?? "";
  const input = await readJson(ctx, BudgetsInput);
  const account = (await gateway.store.listAccounts()).find((a) => a.name === name);
  if (!account) throw new StoreError("not_found", `account "${name}" does not exist`);
  await gateway.store.admin.setAccountBudgets(name, applyBudgets(account.budgets, input));
  await gateway.store.admin.audit(actor, "account.budgets", name, { ...input });
  await gateway.keys.refresh();
  return accountBudgets(gateway, name);
});

export const creditAccount = adminRoute(async ({ ctx, gateway, actor, params }) => {
  const name = params.name ?? "";
  const input = await readJson(ctx, Credit);
  const account = await gateway.store.creditAccount(name, input.amount_usd, input.note);
  await gateway.store.admin.audit(actor, "account.credit", name, {
    amount_nanos: input.amount_usd,
    note: input.note,
  });
  const { byAccount } = await gateway.store.admin.spending(startOfUtcDay());
  gateway.notifier.balanceChanged(account.id);
  return accountView(account, byAccount.get(account.id) ?? 0);
});

export const listGroups = adminRoute(async ({ gateway }) => {
  const groups = await gateway.store.listGroups();
  return { object: "list", data: groups.map(groupView) };
});

export const setGroup = adminRoute(async ({ ctx, gateway, actor, params }) => {
  const name = v.safeParse(Name, params.name ?? "");
  const input = await readJson(ctx, SetGroup);
  const groupName = name.success ? name.output : "";
  const group = await gateway.store.setGroup(groupName, input.models);
  await gateway.store.admin.audit(actor, "group.set", group.name, { models: input.models });
  return groupView(group);
});
