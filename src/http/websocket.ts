// The WebSocket side of the listener: the shape of a socket route (which upgrade requests are
// WebSockets and the handlers that serve them; the one route is src/handlers/sockets.ts). Kept
// apart from the Elysia route table because an upgrade needs Bun's server object.
import type { Server, WebSocketHandler } from "bun";
import type { SocketData } from "../handlers/responses-ws.ts";

export type { SocketData };

export interface SocketRoute {
  /** Upgrades the request when it asks for a WebSocket: undefined once upgraded, a Response when refused, "pass" otherwise. */
  handle(
    request: Request,
    server: Server<SocketData>,
    peer: string | undefined,
  ): Response | undefined | "pass";
  handlers: WebSocketHandler<SocketData>;
}

/** The handlers of a listener that upgrades nothing (Bun requires a handler object). */
export const NO_SOCKETS: WebSocketHandler<SocketData> = {
  message() {
    // Never reached: nothing is upgraded without a SocketRoute.
  },
};
