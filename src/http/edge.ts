// The edge of every request: builds its context, runs the handler, renders any error in the
// client's protocol, stamps `x-request-id` on whatever goes out, and records the request's
// metrics (status, overhead = total minus upstream time; optionally `x-modelgate-overhead-us`, and
// in a cluster `x-modelgate-worker` beside it).
import type { Gateway } from "../gateway.ts";
import { log } from "../log.ts";
import type { Metrics } from "../metrics/metrics.ts";
import { asGatewayError, type ErrorProtocol, errorResponse, GatewayError } from "../wire/errors.ts";
import { requestEnded } from "./access-log.ts";
import { buildContext, type RequestContext } from "./context.ts";

export type Handler = (
  ctx: RequestContext,
  gateway: Gateway,
  params: Record<string, string>,
) => Response | Promise<Response>;

/** The socket peer of each request, recorded by the listener before routing. */
export const peers = new WeakMap<Request, string>();

/** How a route's requests are counted; built once per route, not per request. */
export interface RouteMeter {
  metrics: Metrics;
  /** The route pattern, e.g. `/v1/models/:id`. */
  route: string;
  /** Whether answers carry `x-modelgate-overhead-us`. */
  overheadHeader: boolean;
}

export const OVERHEAD_HEADER = "x-modelgate-overhead-us";
/** Which cluster worker answered (`N pid`), sent beside the overhead header: per-process figures need it. */
export const WORKER_HEADER = "x-modelgate-worker";

export async function runHandler(
  handler: Handler,
  protocol: ErrorProtocol,
  gateway: Gateway,
  request: Request,
  params: Record<string, string>,
  meter?: RouteMeter,
): Promise<Response> {
  const ctx = buildContext(request, peers.get(request), gateway.trustedProxies, protocol);
  if (gateway.tracer !== undefined && meter !== undefined)
    ctx.trace = gateway.tracer.begin(request, meter.route, ctx.requestId);
  meter?.metrics.started();
  let response: Response;
  let error: unknown;
  try {
    response = await handler(ctx, gateway, params);
    response.headers.set("x-request-id", ctx.requestId);
  } catch (thrown) {
    error = thrown;
    response = failure(thrown, ctx, protocol, gateway);
  }
  if (meter) measure(meter, ctx, response, gateway);
  requestEnded(ctx, gateway, response, error);
  ctx.trace?.finish(response.status);
  return response;
}

function failure(thrown: unknown, ctx: RequestContext, protocol: ErrorProtocol, gateway: Gateway): Response {
  let error = asGatewayError(thrown);
  if (error.kind === "internal" && ctx.request.signal.aborted) {
    // The client went away mid-request (its reads and writes fail): not a gateway failure.
    error = new GatewayError("client_closed", "The client closed the connection before the answer.");
  }
  if (error.kind === "internal") {
    log("error", "handler failed", {
      request_id: ctx.requestId,
      path: new URL(ctx.request.url).pathname,
      error: describeThrown(thrown),
    });
  } else if (error.kind === "client_closed") {
    log("debug", "client closed the connection", { request_id: ctx.requestId });
  }
  gateway.traffic.error(error.kind, error.status, error.code);
  ctx.trace?.fail(error.kind, error.message);
  return errorResponse(error, protocol, ctx.requestId);
}

/** Everything known about a thrown value, never empty: name, message, stack and the chain of causes. */
export function describeThrown(thrown: unknown, depth = 0): string {
  if (!(thrown instanceof Error)) {
    const text = typeof thrown === "string" ? thrown : Bun.inspect(thrown);
    return text === "" ? `${typeof thrown} (empty)` : text;
  }
  const head = thrown.message === "" ? `${thrown.name} (no message)` : `${thrown.name}: ${thrown.message}`;
  const stack = thrown.stack?.includes(thrown.message) ? thrown.stack : `${head}\n${thrown.stack ?? ""}`;
  const text = stack.trim() === "" ? head : stack;
  if (thrown.cause === undefined || depth >= 4) return text;
  return `${text}\ncaused by: ${describeThrown(thrown.cause, depth + 1)}`;
}

function measure(meter: RouteMeter, ctx: RequestContext, response: Response, gateway: Gateway): void {
  const overheadUs = meter.metrics.finished({
    route: meter.route,
    method: ctx.request.method,
    status: response.status,
    totalMs: performance.now() - ctx.startedAt,
    upstreamMs: ctx.upstreamMs,
  });
  if (!meter.overheadHeader) return;
  response.headers.set(OVERHEAD_HEADER, String(overheadUs));
  if (gateway.worker !== undefined) response.headers.set(WORKER_HEADER, gateway.worker);
}
