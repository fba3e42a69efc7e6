// The simulator as an HTTP upstream (`modelgate sim --listen ADDR`). It answers the way the real
// provider APIs do, so every upstream adapter is tested over the wire. Every model call passes
// through the fault injector (faults.ts) with the server's fault profile; `GET /sim/stats` reads
// its counters, `PUT /sim/profile` replaces the profile, `POST /sim/reset` zeroes the counters.
import * as v from "valibot";
import { describeIssues } from "../base/validation.ts";
import { MODELS } from "../catalog/models.ts";
import { FaultProfileSchema } from "../config/channels.ts";
import { openaiModelList } from "../wire/models.ts";
import { SIM_EMBEDDING_ROUTES } from "./embeddings.ts";
import { FaultInjector, NO_FAULTS, type SimStats } from "./faults.ts";
import { SIM_IMAGE_ROUTES } from "./images/routes.ts";
import type { SimRoute, SimServerOptions } from "./routes.ts";
import { SIM_SPEECH_ROUTES } from "./speech.ts";
import { simError } from "./text/errors.ts";
import { SIM_TEXT_ROUTES } from "./text/routes.ts";
import { SIM_TRANSCRIPTION_ROUTES } from "./transcriptions.ts";

/** Every route of the simulator (a test checks it serves every endpoint family's paths). */
export const SIM_ROUTES: readonly SimRoute[] = [
  { method: "GET", path: "/healthz", handle: (_r, o) => Response.json({ status: "ok", seed: o.seed }) },
  { method: "GET", path: "/v1/models", handle: () => Response.json(openaiModelList(MODELS)) },
  ...SIM_IMAGE_ROUTES,
  ...SIM_TEXT_ROUTES,
  ...SIM_EMBEDDING_ROUTES,
  ...SIM_TRANSCRIPTION_ROUTES,
  ...SIM_SPEECH_ROUTES,
];

export interface SimServer {
  url: string;
  /** The counters, in process (the same as GET /sim/stats). */
  stats(): SimStats;
  injector: FaultInjector;
  stop(): Promise<void>;
}

function notFound(request: Request, pathname: string): Response {
  const message = `simulator: unknown path ${request.method} ${pathname}`;
  return Response.json(
    { error: { message, type: "invalid_request_error", param: null, code: null } },
    { status: 404 },
  );
}

async function control(request: Request, pathname: string, injector: FaultInjector): Promise<Response> {
  if (request.method === "GET" && pathname === "/sim/stats") return Response.json(injector.stats());
  if (request.method === "POST" && pathname === "/sim/reset") {
    injector.reset();
    return Response.json(injector.stats());
  }
  if (request.method === "PUT" && pathname === "/sim/profile") {
    const parsed = v.safeParse(FaultProfileSchema, await request.json().catch(() => null));
    if (!parsed.success) return Response.json({ error: describeIssues(parsed.issues) }, { status: 400 });
    injector.setProfile(parsed.output);
    return Response.json(parsed.output);
  }
  if (request.method === "GET" && pathname === "/sim/profile") return Response.json(injector.profile);
  return notFound(request, pathname);
}

/** Answers one model call through the fault injector. */
export function simCall(
  injector: FaultInjector,
  route: SimRoute,
  request: Request,
  options: SimServerOptions,
): Promise<Response> {
  return injector.call(
    request,
    async (shape) =>
      route.handle(request, {
        ...options,
        timing: shape.timing ?? options.timing,
        dropAfter: shape.dropAfter,
      }),
    (status, message) => simError(route.errorShape ?? "openai", status, message),
  );
}

export function startSimServer(options: SimServerOptions): SimServer {
  const injector = new FaultInjector(options.profile ?? NO_FAULTS, options.seed);
  const server = Bun.serve({
    hostname: options.hostname,
    port: options.port,
    // A hanging call waits for its client; the server must not cut it first.
    idleTimeout: 0,
    fetch(request, srv) {
      const { pathname } = new URL(request.url);
      if (pathname.startsWith("/sim/")) return control(request, pathname, injector);
      const route = SIM_ROUTES.find((r) => r.method === request.method && r.path === pathname);
      if (route === undefined) return notFound(request, pathname);
      if (route.method === "GET") return route.handle(request, options);
      const peer = srv.requestIP(request);
      if (peer) injector.sawPeer(`${peer.address}:${peer.port}`);
      return simCall(injector, route, request, options);
    },
  });
  return {
    url: `http://${options.hostname}:${server.port}`,
    stats: () => injector.stats(),
    injector,
    stop: () => server.stop(true),
  };
}
