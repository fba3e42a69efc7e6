// /admin/v1/accounts and /admin/v1/groups: list, create, credit (a ledger entry with its note),
// and set a group's models. Accounts show their balance and what they spent today.
import * as v from "valibot";
import { formatUsd, nanos } from "../base/money.ts";
import { startOfUtcDay } from "../base/time.ts";
import type { Account, Group } from "../store/store.ts";
import { adminRoute, readJson } from "./http.ts";
import { ModelPattern, Name, Usd } from "./schemas.ts";
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
