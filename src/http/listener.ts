// The listener: Bun.serve with HTTP/1.1 and HTTP/2, optional TLS, and a graceful stop that
// finishes in-flight requests up to a deadline. Cluster workers share one port through reusePort.
import type { Server } from "bun";
import { type Config, splitListen } from "../config/schema.ts";
import { log } from "../log.ts";
import { asGatewayError, errorResponse } from "../wire/errors.ts";
import { setBodyTimeouts } from "./body.ts";
import { newRequestId } from "./context.ts";
import { describeThrown, peers } from "./edge.ts";
import { routable } from "./target.ts";
import { NO_SOCKETS, type SocketData, type SocketRoute } from "./websocket.ts";

const SLASH = 0x2f;

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
  setBodyTimeouts({
    idleMs: config.server.body_idle_timeout_seconds * 1000,
    totalMs: config.server.body_timeout_seconds * 1000,
  });
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
    fetch(received, srv) {
      const peer = srv.requestIP(received);
      // Upgrades need the request Bun received; routing needs one whose path the router reads.
      // Without a Host header Bun's URL is relative ("/v1/..."), and with a malformed one it does
      // not parse: no upgrade check can read either.
      const request = routable(received);
      const parses =
        request === received || (received.url.charCodeAt(0) !== SLASH && URL.canParse(received.url));
      const upgraded = parses && sockets ? sockets.handle(received, srv, peer?.address) : "pass";
      if (upgraded !== "pass") return upgraded;
      if (peer) peers.set(request, peer.address);
      return fetch(request);
    },
    websocket: sockets?.handlers ?? NO_SOCKETS,
    // Only what escapes the edge (src/http/edge.ts renders every handler failure) lands here.
    error(thrown) {
      log("error", "request failed outside the handlers", { error: describeThrown(thrown) });
      return errorResponse(asGatewayError(thrown), "openai", newRequestId());
    },
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
