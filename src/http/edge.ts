// The edge of every request, as the Elysia lifecycle of src/server.ts calls it: the request's
// context when a route matched (`begin`), the stamps and records when its answer is final
// (`finish`: `x-request-id` and the client's `x-client-request-id`, status, overhead = total minus upstream time, optionally
// `x-modelgate-overhead-us` and in a cluster `x-modelgate-worker`, the access log, the trace),
// what a throw means for the client (`failureOf`) and the one report of a failure (`report`:
// logged at its error-table level with its cause, counted in `modelgate_errors_total{kind}`)
// for HTTP and WebSocket alike.

import { log } from "../base/log.ts";
import type { Gateway } from "../gateway.ts";
import type { Metrics } from "../metrics/metrics.ts";
import { timeline } from "../telemetry/timeline.ts";
import { asGatewayError, describeAttempt, GatewayError } from "../wire/errors.ts";
import { accessLogWrites, pathOf, requestEnded } from "./access-log.ts";
import { buildContext, type RequestContext, stampIds } from "./context.ts";
import { protocolOfPath } from "./paths.ts";

export type Handler = (
  ctx: RequestContext,
  gateway: Gateway,
  params: Record<string, string>,
) => Response | Promise<Response>;

/** A row of a route table (src/server.ts, src/admin/routes.ts): method, path pattern, handler. */
export type Route = readonly [method: "GET" | "HEAD" | "POST", path: string, handler: Handler];

/**
 * The socket peer of requests the server did not receive itself (re-issued under a routable URL,
 * or built for a WebSocket frame): Bun's `requestIP` knows only the requests it received.
 */
export const peers = new WeakMap<Request, string>();

/**
 * The request the server received, of one re-issued under a routable URL (src/http/target.ts):
 * Bun upgrades a WebSocket only on the request it received.
 */
export const received = new WeakMap<Request, Request>();

/** How the app's requests are counted. */
export interface EdgeMeter {
  metrics: Metrics;
  /** Whether answers carry `x-modelgate-overhead-us`. */
  overheadHeader: boolean;
}

export const OVERHEAD_HEADER = "x-modelgate-overhead-us";
/** Which cluster worker answered (`N pid`), sent beside the overhead header: per-process figures need it. */
export const WORKER_HEADER = "x-modelgate-worker";

/** The context of a routed request (`route` is its pattern, e.g. `/v1/models/:id`); starts its trace and timing. */
export function begin(
  gateway: Gateway,
  request: Request,
  peer: string | undefined,
  route: string,
  meter: EdgeMeter | undefined,
): RequestContext {
  const ctx = buildContext(request, peer, gateway.trustedProxies, protocolOfPath(route), route);
  if (timeline !== undefined) timeline.received(ctx, ctx.startedAt);
  if (meter === undefined) return ctx;
  if (gateway.tracer !== undefined) ctx.trace = gateway.tracer.begin(request, route, ctx.requestId);
  meter.metrics.started();
  ctx.metered = true;
  return ctx;
}

/** The answer (or the error answer and its failure) is final: stamps it, measures it, logs its line, ends its trace. */
export function finish(
  ctx: RequestContext,
  gateway: Gateway,
  response: Response,
  meter: EdgeMeter | undefined,
  failure?: GatewayError,
): Response {
  stampIds(response.headers, ctx.requestId, ctx.clientRequestId);
  // Only a request `begin` counted as started is counted as finished (a WebSocket upgrade is neither).
  if (meter && ctx.metered) measure(meter, ctx, response, gateway);
  requestEnded(ctx, gateway, response, failure);
  if (failure) {
    ctx.trace?.fail(failure.kind, failure.message);
    if (failure.attempts.length > 0)
      ctx.trace?.set("modelgate.attempts", failure.attempts.map(describeAttempt));
  }
  ctx.trace?.finish(response.status);
  if (timeline !== undefined) timeline.finished(ctx);
  return response;
}

/** What was thrown, as the error the client is told. A client that went away is not a gateway failure. */
export function failureOf(thrown: unknown, ctx: RequestContext | undefined): GatewayError {
  const error = asGatewayError(thrown);
  if (error.kind !== "internal" || !ctx?.request.signal.aborted) return error;
  // The client went away mid-request (its reads and writes fail): not a gateway failure.
  return new GatewayError("client_closed", "The client closed the connection before the answer.", {
    cause: thrown,
  });
}

/**
 * The one report of an error answer (HTTP or WebSocket): counted by kind, and logged with its
 * cause. Called after the answer's access-log line (`finish`, which also marks the trace). When
 * that line was written (`lined`) it already says the status and code: the report is then a
 * `debug` line (the detail of a refusal), so a refused request writes one line at `info`; a
 * gateway bug (`internal`) keeps its level for its stack, and a WebSocket frame has no line.
 */
export function report(
  error: GatewayError,
  ctx: RequestContext | undefined,
  gateway: Gateway,
  lined: boolean,
): void {
  const inLine = lined && accessLogWrites();
  const level = inLine && error.kind !== "internal" ? "debug" : error.level;
  log(level, error.kind === "internal" ? "handler failed" : "request refused", {
    request_id: ctx?.requestId,
    path: ctx === undefined ? undefined : pathOf(ctx.request.url),
    kind: error.kind,
    code: error.code,
    status: error.status,
    // The access-log line names the attempts; without one, this line does.
    ...(inLine || error.attempts.length === 0 ? {} : { attempts: error.attempts }),
    ...(error.cause === undefined ? {} : { error: describeThrown(error.cause) }),
  });
  gateway.traffic.error(error.kind, error.status, error.code);
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

function measure(meter: EdgeMeter, ctx: RequestContext, response: Response, gateway: Gateway): void {
  const overheadUs = meter.metrics.finished({
    route: ctx.route,
    method: ctx.request.method,
    status: response.status,
    totalMs: performance.now() - ctx.startedAt,
    upstreamMs: ctx.upstreamMs,
  });
  if (!meter.overheadHeader) return;
  response.headers.set(OVERHEAD_HEADER, String(overheadUs));
  if (gateway.worker !== undefined) response.headers.set(WORKER_HEADER, gateway.worker);
}
