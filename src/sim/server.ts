// The simulator as an HTTP upstream (`modelgate sim --listen ADDR`). It answers the way the real
// provider APIs do, so every upstream adapter is tested over the wire.
import { MODELS } from "../catalog/models.ts";
import { openaiModelList } from "../wire/models.ts";

export interface SimServerOptions {
  hostname: string;
  port: number;
  seed: number;
}

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
      if (request.method === "GET" && pathname === "/healthz")
        return Response.json({ status: "ok", seed: options.seed });
      if (request.method === "GET" && pathname === "/v1/models")
        return Response.json(openaiModelList(MODELS));
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
