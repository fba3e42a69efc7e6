// The authentication step of a handler: presented secret + client address → principal, or 401/403;
// and, for a connection that outlives its requests, whether its key still stands.
import { type Principal, presentedSecret } from "../auth/keys.ts";
import type { Gateway } from "../gateway.ts";
import type { RequestContext } from "../http/context.ts";
import type { GatewayError } from "../wire/errors.ts";

export function authenticate(ctx: RequestContext, gateway: Gateway): Principal {
  const principal = gateway.keys.authenticate(presentedSecret(ctx.request.headers), ctx.client);
  ctx.principal = principal; // for the edge's access-log line
  return principal;
}

/** The refusal a connection's key now gets (revoked, expired, removed), or undefined while it stands. */
export function keyStanding(headers: Headers, gateway: Gateway): GatewayError | undefined {
  return gateway.keys.standing(presentedSecret(headers));
}
