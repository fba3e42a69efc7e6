// The edge of every request: builds its context, runs the handler, renders any error in the
// client's protocol, and stamps `x-request-id` on whatever goes out.
import type { Gateway } from "../gateway.ts";
import { log } from "../log.ts";
import { asGatewayError, type ErrorProtocol, errorResponse } from "../wire/errors.ts";
import { buildContext, type RequestContext } from "./context.ts";

export type Handler = (
  ctx: RequestContext,
  gateway: Gateway,
  params: Record<string, string>,
) => Response | Promise<Response>;

/** The socket peer of each request, recorded by the listener before routing. */
export const peers = new WeakMap<Request, string>();

export async function runHandler(
  handler: Handler,
  protocol: ErrorProtocol,
  gateway: Gateway,
  request: Request,
  params: Record<string, string>,
): Promise<Response> {
  const ctx = buildContext(request, peers.get(request), gateway.trustedProxies, protocol);
  try {
    const response = await handler(ctx, gateway, params);
    response.headers.set("x-request-id", ctx.requestId);
    return response;
  } catch (thrown) {
    const error = asGatewayError(thrown);
    if (error.kind === "internal") {
      log("error", "handler failed", {
        request_id: ctx.requestId,
        path: new URL(request.url).pathname,
        error: thrown instanceof Error ? (thrown.stack ?? thrown.message) : String(thrown),
      });
    }
    return errorResponse(error, protocol, ctx.requestId);
  }
}
