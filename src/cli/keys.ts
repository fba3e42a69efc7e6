// `modelgate keys create|list|revoke|enable`.

import { createKey, keyView } from "../admin/keys.ts";
import { checkCidr } from "../base/ip.ts";
import { formatUsd } from "../base/money.ts";
import { toKeyId } from "../base/types.ts";
import type { Budgets } from "../store/sqlite/schema.ts";
import { budgetChange, printBudgets, withChange } from "./budgets.ts";
import { positiveInt, printableName, usd } from "./flag-values.ts";
import { parse } from "./flags.ts";
import { configFrom, openStoreCaughtUp, STORE_FLAGS, storeFrom } from "./open-store.ts";
import { table } from "./table.ts";
import { UsageError } from "./usage-error.ts";

export const USAGE = `usage:
  modelgate keys create --account NAME [--group G] [--name N] [--expires-at RFC3339]
                        [--allow-ip CIDR]... [--daily-cap USD] [--rpm N] [--concurrency N]
                        [--tpm N] [--budget PERIOD=USD]...
  modelgate keys list [--json]
  modelgate keys budgets ID [--budget PERIOD=USD]... [--remove PERIOD]... [--json]
  (PERIOD: daily, weekly, monthly or total; a daily budget is the daily cap)
  modelgate keys revoke ID
  modelgate keys enable ID
common: --db URL (sqlite://PATH or postgres://USER@HOST:PORT/DB) | --journal PATH | --config FILE`;

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

const FLAGS = {
  ...STORE_FLAGS,
  account: { type: "string" },
  group: { type: "string" },
  name: { type: "string" },
  "expires-at": { type: "string" },
  "allow-ip": { type: "string", multiple: true },
  "daily-cap": { type: "string" },
  rpm: { type: "string" },
  concurrency: { type: "string" },
  tpm: { type: "string" },
  budget: { type: "string", multiple: true },
  remove: { type: "string", multiple: true },
} as const;

function expiry(text: string | undefined): number | null {
  if (text === undefined) return null;
  const at = RFC3339.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(at))
    throw new UsageError(`--expires-at: "${text}" is not an RFC 3339 time such as 2027-01-31T00:00:00Z`);
  if (at <= Date.now()) throw new UsageError(`--expires-at: ${text} is in the past; give a future time`);
  return at;
}

export async function keysCommand(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  const { values, positionals } = parse(rest, FLAGS, `keys ${sub ?? ""}`.trim());
  switch (sub) {
    case "create": {
      if (!values.account || positionals.length > 0) throw new UsageError(USAGE);
      const allowIps = values["allow-ip"] ?? [];
      for (const cidr of allowIps) {
        const problem = checkCidr(cidr);
        if (problem) throw new UsageError(`--allow-ip: ${problem}`);
      }
      const input = {
        account: values.account,
        group: values.group ?? "default",
        name: printableName(values.name ?? "", "--name"),
        expiresAt: expiry(values["expires-at"]),
        allowIps,
        dailyCap: values["daily-cap"] === undefined ? null : usd(values["daily-cap"], "--daily-cap"),
        rpm: positiveInt(values.rpm, "--rpm"),
        concurrency: positiveInt(values.concurrency, "--concurrency"),
        tpm: positiveInt(values.tpm, "--tpm"),
        budgets: null as Budgets | null,
      };
      const budgets = budgetChange(values.budget ?? [], []);
      if (budgets.daily != null) {
        if (input.dailyCap !== null)
          throw new UsageError("--budget daily=… is --daily-cap: give one of them");
        input.dailyCap = budgets.daily;
      }
      // The daily period is the key's daily cap (above), not one of its stored budgets.
      const { daily: _daily, ...others } = budgets;
      input.budgets = withChange(null, others);
      const store = await storeFrom(values);
      const { key, secret } = await createKey(store, input);
      // The secret alone on stdout, so `KEY=$(modelgate keys create …)` works; the rest on stderr.
      console.log(secret);
      const cap = key.dailyCap === null ? "" : `, daily cap ${formatUsd(key.dailyCap)} USD`;
      console.error(
        `created key ${key.id} (${key.prefix}…) for account ${key.account}, group ${key.group}${cap}. The secret is shown only once.`,
      );
      return;
    }
    case "list": {
      if (positionals.length > 0) throw new UsageError(USAGE);
      const store = await storeFrom(values);
      const rows = (await store.listKeys()).map((k) => keyView(k));
      console.log(
        values.json
          ? JSON.stringify(rows)
          : table(rows, ["id", "prefix", "name", "account", "group", "status", "expires_at", "allow_ips"]),
      );
      return;
    }
    case "budgets": {
      const [id, extra] = positionals;
      if (!id || extra !== undefined) throw new UsageError(USAGE);
      const config = configFrom(values);
      const store = await openStoreCaughtUp(config);
      let key = await store.admin.getKey(toKeyId(id));
      const change = budgetChange(values.budget ?? [], values.remove ?? []);
      if (Object.keys(change).length > 0) {
        const { daily, ...others } = change;
        key = await store.admin.updateKey(toKeyId(id), {
          ...(daily === undefined ? {} : { dailyCap: daily }),
          ...(Object.keys(others).length > 0 ? { budgets: withChange(key.budgets, others) } : {}),
        });
      }
      const budgets = { ...key.budgets, ...(key.dailyCap === null ? {} : { daily: key.dailyCap }) };
      await printBudgets(store, config, budgets, (s) => s.byKey.get(key.id) ?? 0, values.json, true);
      return;
    }
    case "revoke":
    case "enable": {
      const [id, extra] = positionals;
      if (!id || extra !== undefined) throw new UsageError(USAGE);
      const store = await storeFrom(values);
      const key = await store.setKeyStatus(toKeyId(id), sub === "revoke" ? "revoked" : "enabled");
      console.log(values.json ? JSON.stringify(keyView(key)) : `key ${key.id} is now ${keyView(key).status}`);
      return;
    }
    default:
      throw new UsageError(USAGE);
  }
}
