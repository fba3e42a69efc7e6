// First start on an empty store: account, group and key named `default`, so a new install works
// at once, and an admin token for the admin API and the terminal UI.

import type { Nanos } from "../base/types.ts";
import type { Store } from "../store/store.ts";
import { createKey } from "./keys.ts";
import { createAdminToken } from "./tokens.ts";

export const DEFAULT_NAME = "default";

export interface Bootstrapped {
  /** The `default` API key's secret. */
  secret: string;
  /** The first admin token. */
  adminToken: string;
}

/** Creates the defaults when the store is empty; returns the new secrets, or undefined if not empty. */
export async function bootstrapStore(store: Store, balance: Nanos): Promise<Bootstrapped | undefined> {
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
    tpm: null,
    concurrency: null,
  });
  const { token } = await createAdminToken(store, "bootstrap");
  await store.admin.audit("bootstrap", "admin_token.create", "bootstrap");
  return { secret, adminToken: token };
}
