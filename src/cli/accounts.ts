// `modelgate accounts create|credit|list`.
import { formatUsd } from "../base/money.ts";
import type { Account } from "../store/store.ts";
import { budgetChange, printBudgets, withChange } from "./budgets.ts";
import { printableName, usd } from "./flag-values.ts";
import { parse } from "./flags.ts";
import { configFrom, openStoreCaughtUp, STORE_FLAGS, storeFrom } from "./open-store.ts";
import { table } from "./table.ts";
import { UsageError } from "./usage-error.ts";

export const USAGE = `usage:
  modelgate accounts create NAME [--balance USD]
  modelgate accounts credit NAME USD [--note TEXT]
  modelgate accounts list [--json]
  modelgate accounts budgets NAME [--budget PERIOD=USD]... [--remove PERIOD]... [--json]
  (PERIOD: daily, weekly, monthly or total)
common: --db URL (sqlite://PATH or postgres://USER@HOST:PORT/DB) | --journal PATH | --config FILE`;

function view(account: Account) {
  return {
    name: account.name,
    balance_usd: formatUsd(account.balance),
    balance_nanos: account.balance,
    created_at: new Date(account.createdAt).toISOString(),
  };
}

export async function accountsCommand(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  const { values, positionals } = parse(
    rest,
    {
      ...STORE_FLAGS,
      balance: { type: "string" },
      note: { type: "string" },
      budget: { type: "string", multiple: true },
      remove: { type: "string", multiple: true },
    },
    `accounts ${sub ?? ""}`.trim(),
  );
  switch (sub) {
    case "create": {
      const [name, extra] = positionals;
      if (!name || extra !== undefined) throw new UsageError(USAGE);
      printableName(name, "account name");
      const balance = usd(values.balance ?? "0", "--balance");
      const store = await storeFrom(values);
      const account = await store.createAccount(name, balance);
      console.log(
        values.json
          ? JSON.stringify(view(account))
          : `created account ${name} with balance ${formatUsd(account.balance)} USD`,
      );
      return;
    }
    case "credit": {
      const [name, amount, extra] = positionals;
      if (!name || !amount || extra !== undefined) throw new UsageError(USAGE);
      const value = usd(amount, "USD");
      const store = await storeFrom(values);
      const account = await store.creditAccount(name, value, values.note ?? "credit from CLI");
      console.log(
        values.json
          ? JSON.stringify(view(account))
          : `credited ${formatUsd(value)} USD to ${name}; balance ${formatUsd(account.balance)} USD`,
      );
      return;
    }
    case "budgets": {
      const [name, extra] = positionals;
      if (!name || extra !== undefined) throw new UsageError(USAGE);
      const config = configFrom(values);
      const store = await openStoreCaughtUp(config);
      let account = (await store.listAccounts()).find((a) => a.name === name);
      if (!account) throw new UsageError(`account "${name}" does not exist (modelgate accounts list)`);
      const change = budgetChange(values.budget ?? [], values.remove ?? []);
      if (Object.keys(change).length > 0) {
        await store.admin.setAccountBudgets(name, withChange(account.budgets, change));
        account = { ...account, budgets: withChange(account.budgets, change) };
      }
      const id = account.id;
      await printBudgets(store, config, account.budgets ?? {}, (s) => s.byAccount.get(id) ?? 0, values.json);
      return;
    }
    case "list": {
      if (positionals.length > 0) throw new UsageError(USAGE);
      const store = await storeFrom(values);
      const rows = (await store.listAccounts()).map(view);
      console.log(values.json ? JSON.stringify(rows) : table(rows, ["name", "balance_usd", "created_at"]));
      return;
    }
    default:
      throw new UsageError(USAGE);
  }
}
