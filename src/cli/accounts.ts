// `modelgate accounts create|credit|list`.
import { formatUsd } from "../base/money.ts";
import type { Account } from "../store/store.ts";
import { parse, printableName, STORE_FLAGS, storeFrom, table, UsageError, usd } from "./args.ts";

export const USAGE = `usage:
  modelgate accounts create NAME [--balance USD]
  modelgate accounts credit NAME USD [--note TEXT]
  modelgate accounts list [--json]
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
    { ...STORE_FLAGS, balance: { type: "string" }, note: { type: "string" } },
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
