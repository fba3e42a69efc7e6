// The gateway's Elysia app: the route table (method, path → handler row; the Responses WebSocket
// mode; the admin API as a group under /admin/v1; the admin and image rows import their handlers at
// their first request) and the request lifecycle around it — routable
// targets on request, the edge's context on derive, its records after handle, every error and
// the 404/405 in the client's protocol on error (src/http/edge.ts does the work).
import { Elysia } from "elysia";
import { ADMIN_PREFIX, ADMIN_ROUTES } from "./admin/routes.ts";
import { loadedOnFirstCall } from "./base/lazy.ts";
import { speechToText } from "./endpoints/audio/index.ts";
import { embeddings } from "./endpoints/embeddings/index.ts";
import { images } from "./endpoints/images/index.ts";
import { speech } from "./endpoints/speech/index.ts";
import type { Gateway } from "./gateway.ts";
import { getBalance } from "./handlers/balance.ts";
import { createEmbeddings } from "./handlers/embeddings.ts";
import { countMessageTokens } from "./handlers/messages.ts";
import { getModel, listModels } from "./handlers/models.ts";
import { healthz, readyz, root } from "./handlers/probes.ts";
import { textRow } from "./handlers/text.ts";
import { unroutedEnded } from "./http/access-log.ts";
import {
  clientRequestIdOf,
  newRequestId,
  type RequestContext,
  refuseEarly,
  stampIds,
} from "./http/context.ts";
import {
  begin,
  type EdgeMeter,
  failureOf,
  finish,
  peers,
  type Route,
  received,
  report,
} from "./http/edge.ts";
import { methodNotAllowedError, notFoundError, protocolOfPath } from "./http/paths.ts";
import { RESPONSES_SOCKET_PATH, responsesSocket } from "./http/responses-ws.ts";
import { routable, routerReadsPath } from "./http/target.ts";
import { metricsHandler } from "./metrics/access.ts";
import { Metrics } from "./metrics/metrics.ts";
import { ALL_PROTOCOLS } from "./protocols/index.ts";
import { withBody } from "./request/body.ts";
import { errorResponse, GatewayError } from "./wire/errors.ts";

/** A text request's body is read under `[text] max_body_bytes`. */
const textBodyCap = (gateway: Gateway): number => gateway.config.text.max_body_bytes;

/**
 * The API routes; each path's error shape follows from it (src/http/paths.ts `protocolOfPath`).
 * Every endpoint family's paths are its record's (src/endpoints/), the text rows one per protocol.
 */
export const ROUTES: readonly Route[] = [
  ["GET", "/", root],
  ["HEAD", "/", root],
  ["GET", "/healthz", healthz],
  ["GET", "/readyz", readyz],
  ["GET", "/v1/models", listModels],
  ["GET", "/v1/models/:id", getModel],
  ["GET", "/v1/dashboard/billing/balance", getBalance],
  // One row per text protocol record (src/protocols/index.ts).
  ...ALL_PROTOCOLS.map((record): Route => ["POST", record.path, withBody(textBodyCap, textRow(record))]),
  ["POST", "/v1/messages/count_tokens", withBody(textBodyCap, countMessageTokens)],
  ["POST", embeddings.paths.embeddings, withBody(textBodyCap, createEmbeddings)],
  // Imported at their first request (speech with its pipeline and the simulator's encoder; images
  // with the multipart reader and the image checks).
  [
    "POST",
    speech.paths.speech,
    withBody(
      textBodyCap,
      loadedOnFirstCall(async () => (await import("./handlers/speech.ts")).createSpeech),
    ),
  ],
  [
    "POST",
    images.paths.generations,
    loadedOnFirstCall(async () => (await import("./handlers/images.ts")).createImage),
  ],
  [
    "POST",
    images.paths.edits,
    loadedOnFirstCall(async () => (await import("./handlers/images-edits.ts")).editImage),
  ],
  // Read their multipart bodies themselves, under the 25 MB file cap (src/handlers/audio-upload.ts).
  [
    "POST",
    speechToText.paths.transcription,
    loadedOnFirstCall(async () => (await import("./handlers/transcriptions.ts")).createTranscription),
  ],
  [
    "POST",
    speechToText.paths.translation,
    loadedOnFirstCall(async () => (await import("./handlers/transcriptions.ts")).createTranslation),
  ],
];

export interface App {
  /** The Elysia app; src/http/listener.ts serves it. */
  elysia: Elysia;
  handle(request: Request): Promise<Response>;
  /** Request counts, overhead and upstream-time histograms (GET /metrics renders them). */
  metrics: Metrics;
}

/** Builds the gateway's app; the listener serves it, tests may call `handle`. */
export function createApp(gateway: Gateway): App {
  const metrics = new Metrics();
  const meter: EdgeMeter = { metrics, overheadHeader: gateway.config.metrics.overhead_header };
  // A WebSocket message is capped after decompression as a body is (`[text] max_body_bytes`): Bun
  // closes the socket with 1009 before inflating past it, so a few KB of deflated frame cannot
  // expand into gigabytes.
  const app = new Elysia({
    websocket: { perMessageDeflate: true, maxPayloadLength: gateway.config.text.max_body_bytes },
  });
  // A target the router would misread (src/http/target.ts) is answered as the same request
  // under a URL it reads; the socket peer goes along, since Bun only knows the request it received.
  app.onRequest(({ request, server }) => {
    if (routerReadsPath(request.url)) return undefined;
    const fixed = routable(request);
    const peer = server?.requestIP(request)?.address;
    if (peer !== undefined) peers.set(fixed, peer);
    received.set(fixed, request);
    return app.handle(fixed);
  });
  app.onError((context) => {
    const { request, error, code } = context;
    if (code === "NOT_FOUND" && !(error instanceof GatewayError)) return unrouted(app, request);
    // The edge's context is there when a route matched (`derive` below), and on an upgrade refusal
    // (the Responses WebSocket's upgrade check sets it, src/http/responses-ws.ts).
    const ctx = (context as { ctx?: ReturnType<typeof begin> }).ctx;
    const failure = failureOf(error, ctx);
    const response =
      ctx === undefined
        ? errorResponse(failure, protocolOfPath(new URL(request.url).pathname), newRequestId())
        : finish(ctx, gateway, errorResponse(failure, ctx.protocol, ctx.requestId), meter, failure);
    report(failure, ctx, gateway, ctx !== undefined);
    return response;
  });
  // Before `derive`: a socket is not a request the edge times and counts.
  app.ws(RESPONSES_SOCKET_PATH, responsesSocket(gateway));
  const routed = app
    .derive(({ request, server, route }) => ({
      ctx: begin(gateway, request, peers.get(request) ?? server?.requestIP(request)?.address, route, meter),
    }))
    .onAfterHandle(({ ctx, response }) => {
      if (response instanceof Response) finish(ctx, gateway, response, meter);
    });
  const rows: Route[] = gateway.config.metrics.enabled
    ? [...ROUTES, ["GET", "/metrics", metricsHandler(metrics, gateway)]]
    : [...ROUTES];
  // parse: "none": handlers read bodies themselves, with size caps enforced while reading.
  // A request refused before its row (src/http/context.ts `refuseEarly`) still gets its access-log line.
  const run =
    (handler: Route[2]) =>
    ({ ctx, params }: { ctx: RequestContext; params: Record<string, string> }) => {
      refuseEarly(ctx);
      return handler(ctx, gateway, params);
    };
  for (const [method, path, handler] of rows) routed.route(method, path, run(handler), { parse: "none" });
  routed.group(ADMIN_PREFIX, (admin) => {
    for (const [method, path, handler] of ADMIN_ROUTES)
      admin.route(method, path, run(handler), { parse: "none" });
    return admin;
  });
  return { elysia: app, handle: (request) => app.handle(request), metrics };
}

/** 404, or 405 with `Allow` when the path is served under other methods: in the path's protocol. */
function unrouted(app: Elysia, request: Request): Response {
  const { pathname, origin } = new URL(request.url);
  const allowed = app.routes
    .filter((r) => r.method !== "WS" && pathMatches(r.path, pathname))
    .map((r) => r.method);
  const error =
    allowed.length > 0
      ? methodNotAllowedError(request.method, pathname, allowed)
      : notFoundError(request.method, pathname, origin);
  const requestId = newRequestId();
  const clientRequestId = clientRequestIdOf(request);
  const response = errorResponse(error, protocolOfPath(pathname), requestId);
  stampIds(response.headers, requestId, clientRequestId);
  unroutedEnded(request, requestId, clientRequestId, response, error.code ?? error.kind);
  return response;
}

function pathMatches(pattern: string, pathname: string): boolean {
  const a = pattern.split("/");
  const b = pathname.split("/");
  return (
    a.length === b.length &&
    a.every((part, i) => (part.startsWith(":") ? (b[i] ?? "") !== "" : part === b[i]))
  );
}
