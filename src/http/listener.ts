// The listener: Bun.serve with HTTP/1.1 and HTTP/2, optional TLS, and a graceful stop that
// finishes in-flight requests up to a deadline. Cluster workers share one port through reusePort.
import type { Server } from "bun";
import { type Config, splitListen } from "../config/schema.ts";
import { log } from "../log.ts";
import { peers } from "./edge.ts";
import { NO_SOCKETS, type SocketData, type SocketRoute } from "./websocket.ts";

export interface Listener {
  server: Server<SocketData>;
  /** The base URL clients use, e.g. `http://127.0.0.1:8080`. */
  url: string;
  /** Stops accepting, waits for in-flight requests up to `deadlineMs`, then closes what remains. */
  drain(deadlineMs: number): Promise<{ drained: boolean; remaining: number }>;
}

export interface ListenOptions {
  /** SO_REUSEPORT: every cluster worker binds the same host:port and the kernel spreads connections. */
  reusePort?: boolean;
}

export function listen(
  config: Config,
  fetch: (request: Request) => Response | Promise<Response>,
  sockets?: SocketRoute,
  options: ListenOptions = {},
): Listener {
  const { hostname, port } = splitListen(config.server.listen);
  const { tls_cert: cert, tls_key: key } = config.server;
  const tls = cert && key ? { cert: Bun.file(cert), key: Bun.file(key) } : undefined;
  const server = Bun.serve({
    hostname,
    port,
    http2: config.server.http2,
    ...(tls ? { tls } : {}),
    ...(options.reusePort ? { reusePort: true } : {}),
    // Streams may stay quiet for long; the relay sends keep-alives, so only truly dead sockets time out.
    idleTimeout: 255,
    fetch(request, srv) {
      const peer = srv.requestIP(request);
      if (peer) peers.set(request, peer.address);
      const upgraded = sockets?.handle(request, srv, peer?.address) ?? "pass";
      return upgraded === "pass" ? fetch(request) : upgraded;
    },
    websocket: sockets?.handlers ?? NO_SOCKETS,
  });
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
