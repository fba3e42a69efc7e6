// First start on an empty store: account, group and key named `default`, so a new install works at once.
import type { Store } from "../store/store.ts";
import type { Nanos } from "../types.ts";
import { createKey } from "./keys.ts";

export const DEFAULT_NAME = "default";

/** Creates the defaults when the store is empty; returns the new key's secret, or undefined if not empty. */
export async function bootstrapStore(store: Store, balance: Nanos): Promise<string | undefined> {
  if (!(await store.isEmpty())) return undefined;
  await store.createAccount(DEFAULT_NAME, balance);
  const groups = await store.listGroups();
  if (!groups.some((g) => g.name === DEFAULT_NAME)) await store.setGroup(DEFAULT_NAME, ["*"]);
  const { secret } = await createKey(store, {
    account: DEFAULT_NAME,
    group: DEFAULT_NAME,
    name: DEFAULT_NAME,
    expiresAt: null,
    allowIps: [],
    dailyCap: null,
    rpm: null,
    concurrency: null,
  });
  return secret;
}
