// Admin tokens: `mga-` plus 32 random bytes, distinct from API keys (`sk-`); only the SHA-256 is
// stored. Checked on every /admin/v1 request together with the client address allowlist.
import { randomBytes } from "node:crypto";
import { ADMIN_TOKEN_PREFIX, hashSecret } from "../auth/secret.ts";
import { CidrList } from "../base/ip.ts";
import type { Gateway } from "../gateway.ts";
import type { RequestContext } from "../http/context.ts";
import type { AdminToken } from "../store/admin.ts";
import { type Store, StoreError } from "../store/store.ts";
import { GatewayError } from "../wire/errors.ts";

/** Mints an admin token; the returned `token` is the only copy of the secret. */
export async function createAdminToken(
  store: Store,
  name: string,
): Promise<{ token: string; record: AdminToken }> {
  const token = `${ADMIN_TOKEN_PREFIX}${randomBytes(32).toString("base64url")}`;
  const record = await store.admin.createAdminToken({
    id: `adm_${randomBytes(8).toString("hex")}`,
    name,
    prefix: token.slice(0, 10),
    tokenHash: hashSecret(token),
  });
  return { token, record };
}

/**
 * Revokes an admin token and records `actor` in the audit log. The token is looked up in the store
 * on every admin request, so it is refused from the next request on, on every process.
 */
export async function revokeAdminToken(store: Store, id: string, actor: string): Promise<AdminToken> {
  const record = await store.admin.revokeAdminToken(id);
  if (!record) {
    throw new StoreError(
      "not_found",
      `No admin token has the id ${id}; \`modelgate admin token list\` shows the ids (adm_...).`,
    );
  }
  await store.admin.audit(actor, "admin_token.revoke", id, { name: record.name });
  return record;
}

/** The token a request presents: `Authorization: Bearer …` or `x-admin-token`. */
export function presentedAdminToken(headers: Headers): string | undefined {
  const authorization = headers.get("authorization");
  const match = authorization ? /^Bearer\s+(\S+)\s*$/i.exec(authorization) : null;
  if (match?.[1]) return match[1];
  return headers.get("x-admin-token")?.trim() || undefined;
}

const allowLists = new WeakMap<readonly string[], CidrList>();

function allowList(cidrs: readonly string[]): CidrList {
  let list = allowLists.get(cidrs);
  if (!list) {
    list = new CidrList(cidrs);
    allowLists.set(cidrs, list);
  }
  return list;
}

/** Who is acting, as recorded in the audit log: `admin:<token id>:<token name>`. */
export async function authenticateAdmin(ctx: RequestContext, gateway: Gateway): Promise<string> {
  if (!allowList(gateway.config.admin.allow_from).contains(ctx.client)) {
    throw new GatewayError(
      "ip_not_allowed",
      `The admin API does not accept requests from ${ctx.client?.toString() ?? "an unknown address"}; add the address to admin.allow_from in the config to allow it.`,
      { code: "admin_address_not_allowed" },
    );
  }
  const token = presentedAdminToken(ctx.request.headers);
  if (!token) {
    throw new GatewayError(
      "invalid_api_key",
      "No admin token provided. Send it as `Authorization: Bearer mga-...`; `modelgate admin token create` mints one.",
      { code: "missing_admin_token" },
    );
  }
  const hash = hashSecret(token);
  const found = await gateway.store.admin.findAdminToken(hash);
  if (found) return `admin:${found.id}:${found.name}`;
  if (await gateway.store.admin.isApiKeyHash(hash)) {
    throw new GatewayError(
      "forbidden",
      "This is an API key, not an admin token: the admin API needs an admin token (mga-...), which `modelgate admin token create` mints.",
      { code: "admin_token_required" },
    );
  }
  throw new GatewayError(
    "invalid_api_key",
    "Incorrect or revoked admin token. `modelgate admin token create` mints a new one.",
    { code: "invalid_admin_token" },
  );
}
