// The authentication step of a handler: presented secret + client address → principal, or 401/403.
import { type Principal, presentedSecret } from "../auth/keys.ts";
import type { Gateway } from "../gateway.ts";
import type { RequestContext } from "../http/context.ts";

export function authenticate(ctx: RequestContext, gateway: Gateway): Principal {
  const principal = gateway.keys.authenticate(presentedSecret(ctx.request.headers), ctx.client);
  ctx.principal = principal; // for the edge's access-log line
  return principal;
}
