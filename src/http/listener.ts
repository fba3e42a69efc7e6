// The listener: the Elysia app served by `app.listen` (Bun.serve underneath) with HTTP/1.1 and
// HTTP/2, optional TLS, and a graceful stop that finishes in-flight requests up to a deadline.
// Cluster workers share one port through reusePort.
import type { Server } from "bun";
import type { AnyElysia } from "elysia";
import { log } from "../base/log.ts";
import { type Config, splitListen } from "../config/schema.ts";
import { setBodyTimeouts } from "../request/body.ts";
import { asGatewayError, errorResponse } from "../wire/errors.ts";
import { newRequestId } from "./context.ts";
import { describeThrown } from "./edge.ts";

export interface Listener {
  server: Server<unknown>;
  /** The base URL clients use, e.g. `http://127.0.0.1:8080`. */
  url: string;
  /** Stops accepting, waits for in-flight requests up to `deadlineMs`, then closes what remains. */
  drain(deadlineMs: number): Promise<{ drained: boolean; remaining: number }>;
}

export interface ListenOptions {
  /** SO_REUSEPORT: every cluster worker binds the same host:port and the kernel spreads connections. */
  reusePort?: boolean;
}

export function listen(config: Config, app: AnyElysia, options: ListenOptions = {}): Listener {
  const { hostname, port } = splitListen(config.server.listen);
  setBodyTimeouts({
    idleMs: config.server.body_idle_timeout_seconds * 1000,
    totalMs: config.server.body_timeout_seconds * 1000,
  });
  const { tls_cert: cert, tls_key: key } = config.server;
  const tls = cert && key ? { cert: Bun.file(cert), key: Bun.file(key) } : undefined;
  app.listen({
    hostname,
    port,
    // Bun's option, passed through by Elysia; not in its type.
    ...({ http2: config.server.http2 } as object),
    ...(tls ? { tls } : {}),
    // Elysia binds with SO_REUSEPORT unless told: only cluster workers share a port; a second
    // gateway on a port in use must fail to start.
    reusePort: options.reusePort === true,
    // Streams may stay quiet for long; the relay sends keep-alives, so only truly dead sockets time out.
    idleTimeout: 255,
    // Only what escapes the app (its error handler renders every failure, src/server.ts) lands here.
    error(thrown) {
      log("error", "request failed outside the handlers", { error: describeThrown(thrown) });
      return errorResponse(asGatewayError(thrown), "openai", newRequestId());
    },
  });
  const server = app.server;
  if (server === null) throw new Error("Elysia did not start its server");
  const scheme = tls ? "https" : "http";
  const shownHost = hostname.includes(":") ? `[${hostname}]` : hostname;
  return {
    server,
    url: `${scheme}://${shownHost}:${server.port}`,
    async drain(deadlineMs) {
      const stopped = server.stop(false);
      const until = Date.now() + deadlineMs;
      while (server.pendingRequests > 0 && Date.now() < until) await Bun.sleep(25);
      const remaining = server.pendingRequests;
      if (remaining > 0) log("warn", "shutdown deadline reached; closing in-flight requests", { remaining });
      await server.stop(true);
      await stopped;
      return { drained: remaining === 0, remaining };
    },
  };
}
