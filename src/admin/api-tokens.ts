// /admin/v1/tokens: the admin tokens (never their secrets) and revoking one. Revocation is
// audited with the acting token; a revoked token is refused from its next request on, and its open
// event feeds on this process are closed before the answer.

import type { AdminToken } from "../store/admin.ts";
import { adminRoute } from "./http.ts";
import { closeRevoked } from "./sessions.ts";
import { revokeAdminToken } from "./tokens.ts";
import { isoTime } from "./view.ts";

/** An admin token as the admin API shows it (never its secret). */
export function tokenView(token: AdminToken) {
  return {
    id: token.id,
    name: token.name,
    prefix: token.prefix,
    revoked: token.revoked,
    created_at: isoTime(token.createdAt),
  };
}

export const listTokens = adminRoute(async ({ gateway }) => ({
  data: (await gateway.store.admin.listAdminTokens()).map(tokenView),
}));

export const revokeToken = adminRoute(async ({ gateway, params, actor }) => {
  const revoked = await revokeAdminToken(gateway.store, params.id ?? "", actor);
  await closeRevoked();
  return tokenView(revoked);
});
