// /admin/v1/cache/purge: deletes the response cache's stored answers (`[cache]`, src/cache/), all
// of them or one account's (answers stored in the account scope), audited with the acting token.
import * as v from "valibot";
import { GatewayError } from "../wire/errors.ts";
import { adminRoute, readQuery } from "./http.ts";

const PurgeQuery = v.strictObject({
  /** An account name: only the answers stored in that account's scope. */
  account: v.optional(v.pipe(v.string(), v.minLength(1, "expected an account name"))),
});

export const purgeCache = adminRoute(async ({ ctx, gateway, actor }) => {
  const { account } = readQuery(ctx, PurgeQuery);
  let scope: string | undefined;
  if (account !== undefined) {
    const found = (await gateway.store.listAccounts()).find((a) => a.name === account);
    if (found === undefined) {
      throw new GatewayError(
        "not_found",
        `no account named "${account}"; GET /admin/v1/accounts lists them`,
        {
          param: "account",
        },
      );
    }
    scope = `account:${found.id}`;
  }
  const purged = await gateway.cache.purge(scope);
  await gateway.store.admin.audit(actor, "cache.purge", account ?? "*", { purged });
  return { purged, account: account ?? null, enabled: gateway.cache.enabled };
});
