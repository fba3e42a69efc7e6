// The simulator as an HTTP upstream (`modelgate sim --listen ADDR`). It answers the way the real
// provider APIs do, so every upstream adapter is tested over the wire.
import { MODELS } from "../catalog/models.ts";
import { openaiModelList } from "../wire/models.ts";
import { SIM_IMAGE_ROUTES } from "./images/routes.ts";
import { SIM_TEXT_ROUTES } from "./text/routes.ts";

export interface SimServerOptions {
  hostname: string;
  port: number;
  seed: number;
}

/** A route of the simulator: protocol modules (text, images) each contribute theirs. */
export interface SimRoute {
  method: "GET" | "POST";
  path: string;
  handle(request: Request, options: SimServerOptions): Response | Promise<Response>;
}

const ROUTES: readonly SimRoute[] = [
  { method: "GET", path: "/healthz", handle: (_r, o) => Response.json({ status: "ok", seed: o.seed }) },
  { method: "GET", path: "/v1/models", handle: () => Response.json(openaiModelList(MODELS)) },
  ...SIM_IMAGE_ROUTES,
  ...SIM_TEXT_ROUTES,
];

export interface SimServer {
  url: string;
  stop(): Promise<void>;
}

export function startSimServer(options: SimServerOptions): SimServer {
  const server = Bun.serve({
    hostname: options.hostname,
    port: options.port,
    fetch(request) {
      const { pathname } = new URL(request.url);
      const route = ROUTES.find((r) => r.method === request.method && r.path === pathname);
      if (route) return route.handle(request, options);
      return Response.json(
        {
          error: {
            message: `simulator: unknown path ${request.method} ${pathname}`,
            type: "invalid_request_error",
            param: null,
            code: null,
          },
        },
        { status: 404 },
      );
    },
  });
  return { url: `http://${options.hostname}:${server.port}`, stop: () => server.stop(true) };
}
