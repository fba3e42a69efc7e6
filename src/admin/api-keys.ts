// /admin/v1/keys: list with filters, create (secret in the answer only), change settings,
// revoke and enable. Changes go through the Store, which bumps the revision every key cache polls.
import * as v from "valibot";
import { startOfUtcDay } from "../base/time.ts";
import { type KeyId, toKeyId } from "../base/types.ts";
import type { KeyPatch } from "../store/admin.ts";
import { type AdminCall, adminRoute, readJson, readQuery } from "./http.ts";
import { budgetView, createKey, keyView, meteredOf } from "./keys.ts";
import { applyBudgets, BudgetsInput, Cidr, FutureTime, KeyName, Name, PositiveInt, Usd } from "./schemas.ts";

const CreateKey = v.strictObject({
  account: Name,
  group: v.optional(Name, "default"),
  name: v.optional(KeyName, ""),
  expires_at: v.optional(v.nullable(FutureTime), null),
  allow_ips: v.optional(v.array(Cidr), []),
  daily_cap_usd: v.optional(v.nullable(Usd), null),
  rpm: v.optional(v.nullable(PositiveInt), null),
  concurrency: v.optional(v.nullable(PositiveInt), null),
  tpm: v.optional(v.nullable(PositiveInt), null),
  budgets: v.optional(BudgetsInput, {}),
});

const UpdateKey = v.strictObject({
  name: v.optional(KeyName),
  group: v.optional(Name),
  expires_at: v.optional(v.nullable(FutureTime)),
  allow_ips: v.optional(v.nullable(v.array(Cidr))),
  daily_cap_usd: v.optional(v.nullable(Usd)),
  rpm: v.optional(v.nullable(PositiveInt)),
  concurrency: v.optional(v.nullable(PositiveInt)),
  tpm: v.optional(v.nullable(PositiveInt)),
  budgets: v.optional(BudgetsInput),
});

const KeyQuery = v.strictObject({
  account: v.optional(v.string()),
  group: v.optional(v.string()),
  status: v.optional(v.picklist(["enabled", "revoked", "expired"])),
  name: v.optional(v.string()),
});

/** A key as the admin API shows it: the CLI's view plus what it spent today (UTC). */
async function views(call: AdminCall, ids?: Set<KeyId>) {
  const { byKey } = await call.gateway.store.admin.spending(startOfUtcDay());
  const keys = await call.gateway.store.listKeys();
  return keys
    .filter((k) => ids === undefined || ids.has(k.id))
    .map((k) => ({ ...keyView(k), spent_today_nanos: byKey.get(k.id) ?? 0 }));
}

/** The key a /keys/{id} route names. */
function keyIdOf(call: AdminCall): KeyId {
  return toKeyId(call.params.id ?? "");
}

/** One key's view with its budgets in their current periods (and its account's). */
async function oneView(call: AdminCall, id: KeyId) {
  const key = await call.gateway.store.admin.getKey(id); // 404 when unknown
  const [view] = await views(call, new Set([id]));
  const figures = call.gateway.meter.budgetFigures;
  if (!figures) return view;
  const metered = meteredOf(key);
  return {
    ...view,
    budgets: (await figures.call(call.gateway.meter, metered, "key")).map(budgetView),
    account_budgets: (await figures.call(call.gateway.meter, metered, "account")).map(budgetView),
  };
}

/** A key as GET /admin/v1/keys lists it (the terminal UI reads this type). */
export type ListedKeyView = Awaited<ReturnType<typeof views>>[number];
/** A key as GET /admin/v1/keys/{id} shows it when the meter reads budgets: with its budgets and its account's. */
export type KeyBudgetsView = Extract<Awaited<ReturnType<typeof oneView>>, { budgets: unknown }>;

export const listKeys = adminRoute(async (call) => {
  const q = readQuery(call.ctx, KeyQuery);
  const rows = (await views(call)).filter(
    (k) =>
      (q.account === undefined || k.account === q.account) &&
      (q.group === undefined || k.group === q.group) &&
      (q.status === undefined || k.status === q.status) &&
      (q.name === undefined || k.name.toLowerCase().includes(q.name.toLowerCase())),
  );
  return { object: "list", data: rows };
});

export const getKey = adminRoute(async (call) => oneView(call, keyIdOf(call)));

export const createKeyRoute = adminRoute(async (call) => {
  const input = await readJson(call.ctx, CreateKey);
  const { key, secret } = await createKey(call.gateway.store, {
    account: input.account,
    group: input.group,
    name: input.name,
    expiresAt: input.expires_at,
    allowIps: input.allow_ips,
    // `budgets.daily` is the daily cap by its other name.
    dailyCap: input.budgets.daily ?? input.daily_cap_usd,
    rpm: input.rpm,
    concurrency: input.concurrency,
    tpm: input.tpm,
    budgets: applyBudgets(null, { ...input.budgets, daily: undefined }),
  });
  await call.gateway.store.admin.audit(call.actor, "key.create", key.id, {
    account: key.account,
    group: key.group,
    name: key.name,
  });
  return { ...(await oneView(call, key.id)), secret };
}, 201);

export const updateKey = adminRoute(async (call) => {
  const id = keyIdOf(call);
  const input = await readJson(call.ctx, UpdateKey);
  const current = input.budgets ? await call.gateway.store.admin.getKey(id) : undefined;
  const daily = input.budgets?.daily;
  const patch: KeyPatch = {
    name: input.name,
    group: input.group,
    expiresAt: input.expires_at,
    allowIps: input.allow_ips === null || input.allow_ips?.length === 0 ? null : input.allow_ips,
    dailyCap: daily !== undefined ? daily : input.daily_cap_usd,
    rpm: input.rpm,
    concurrency: input.concurrency,
    tpm: input.tpm,
    budgets:
      input.budgets && current
        ? applyBudgets(current.budgets, { ...input.budgets, daily: undefined })
        : undefined,
  };
  await call.gateway.store.admin.updateKey(id, patch);
  await call.gateway.store.admin.audit(call.actor, "key.update", id, { ...input });
  return oneView(call, id);
});

function statusRoute(status: "enabled" | "revoked") {
  return adminRoute(async (call) => {
    const id = keyIdOf(call);
    await call.gateway.store.setKeyStatus(id, status);
    await call.gateway.store.admin.audit(call.actor, status === "revoked" ? "key.revoke" : "key.enable", id);
    return oneView(call, id);
  });
}

export const revokeKey = statusRoute("revoked");
export const enableKey = statusRoute("enabled");
