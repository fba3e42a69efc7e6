// The route table: which handler serves which method and path, and in which error protocol.
import { Elysia } from "elysia";
import { ADMIN_ROUTES } from "./admin/routes.ts";
import type { Gateway } from "./gateway.ts";
import { getBalance } from "./handlers/balance.ts";
import { createChatCompletion } from "./handlers/chat.ts";
import { createImage } from "./handlers/images.ts";
import { editImage } from "./handlers/images-edits.ts";
import { countMessageTokens, createMessage } from "./handlers/messages.ts";
import { getModel, listModels } from "./handlers/models.ts";
import { healthz, readyz, root } from "./handlers/probes.ts";
import { createResponse } from "./handlers/responses.ts";
import { unroutedEnded } from "./http/access-log.ts";
import { requestIdOf } from "./http/context.ts";
import { type Handler, type RouteMeter, runHandler } from "./http/edge.ts";
import { methodNotAllowedError, notFoundError, protocolOfPath } from "./http/paths.ts";
import { metricsHandler } from "./metrics/access.ts";
import { Metrics } from "./metrics/metrics.ts";
import type { ErrorProtocol } from "./wire/errors.ts";
import { errorResponse } from "./wire/errors.ts";

type Method = "GET" | "HEAD" | "POST";

interface Route {
  method: Method;
  path: string;
  protocol: ErrorProtocol;
  handler: Handler;
}

export const ROUTES: readonly Route[] = [
  { method: "GET", path: "/", protocol: "openai", handler: root },
  { method: "HEAD", path: "/", protocol: "openai", handler: root },
  { method: "GET", path: "/healthz", protocol: "openai", handler: healthz },
  { method: "GET", path: "/readyz", protocol: "openai", handler: readyz },
  { method: "GET", path: "/v1/models", protocol: "openai", handler: listModels },
  { method: "GET", path: "/v1/models/:id", protocol: "openai", handler: getModel },
  { method: "GET", path: "/v1/dashboard/billing/balance", protocol: "openai", handler: getBalance },
  { method: "POST", path: "/v1/responses", protocol: "openai", handler: createResponse },
  { method: "POST", path: "/v1/chat/completions", protocol: "openai", handler: createChatCompletion },
  { method: "POST", path: "/v1/messages", protocol: "anthropic", handler: createMessage },
  { method: "POST", path: "/v1/messages/count_tokens", protocol: "anthropic", handler: countMessageTokens },
  { method: "POST", path: "/v1/images/generations", protocol: "openai", handler: createImage },
  { method: "POST", path: "/v1/images/edits", protocol: "openai", handler: editImage },
  ...ADMIN_ROUTES,
];

export interface App {
  handle(request: Request): Promise<Response>;
  /** Request counts, overhead and upstream-time histograms (GET /metrics renders them). */
  metrics: Metrics;
}

/** GET /metrics: the Prometheus text exposition of the app's metrics, to allowed scrapers only. */
function metricsRoute(metrics: Metrics, gateway: Gateway): Route {
  return { method: "GET", path: "/metrics", protocol: "openai", handler: metricsHandler(metrics, gateway) };
}

/** Builds the HTTP app for a gateway; `handle` is what the listener calls. */
export function createApp(gateway: Gateway): App {
  const metrics = new Metrics();
  const app = new Elysia().onError(({ code, request }) => {
    if (code !== "NOT_FOUND") return undefined;
    const pathname = new URL(request.url).pathname;
    const allowed = allowedMethods(pathname);
    const error =
      allowed.length > 0
        ? methodNotAllowedError(request.method, pathname, allowed)
        : notFoundError(request.method, pathname);
    const requestId = requestIdOf(request);
    const response = errorResponse(error, protocolOfPath(pathname), requestId);
    unroutedEnded(request, requestId, response, error.code ?? error.kind);
    return response;
  });
  const routes = gateway.config.metrics.enabled ? [...ROUTES, metricsRoute(metrics, gateway)] : ROUTES;
  for (const route of routes) {
    const meter: RouteMeter = {
      metrics,
      route: route.path,
      overheadHeader: gateway.config.metrics.overhead_header,
    };
    // parse: "none": handlers read bodies themselves, with size caps enforced while reading.
    app.route(
      route.method,
      route.path,
      ({ request, params }) =>
        runHandler(route.handler, route.protocol, gateway, request, params as Record<string, string>, meter),
      { parse: "none" },
    );
  }
  return { handle: (request) => app.handle(request), metrics };
}

function allowedMethods(pathname: string): Method[] {
  return ROUTES.filter((r) => pathMatches(r.path, pathname)).map((r) => r.method);
}

function pathMatches(pattern: string, pathname: string): boolean {
  const a = pattern.split("/");
  const b = pathname.split("/");
  return (
    a.length === b.length &&
    a.every((part, i) => (part.startsWith(":") ? (b[i] ?? "") !== "" : part === b[i]))
  );
}
