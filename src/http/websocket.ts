// The WebSocket side of the listener: which upgrade requests are WebSockets and the handlers that
// serve them (today only the Responses WebSocket mode, src/handlers/responses-ws.ts). Kept apart
// from the Elysia route table because an upgrade needs Bun's server object.
import type { Server, WebSocketHandler } from "bun";
import type { Gateway } from "../gateway.ts";
import {
  isResponsesUpgrade,
  responsesSocketHandlers,
  type SocketData,
  upgradeData,
} from "../handlers/responses-ws.ts";

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

export function socketRoute(gateway: Gateway): SocketRoute {
  return {
    handle(request, server, peer) {
      if (!isResponsesUpgrade(request)) return "pass";
      const data = upgradeData(gateway, request, peer);
      if (data instanceof Response) return data;
      if (server.upgrade(request, { data })) return undefined;
      return new Response(
        JSON.stringify({
          error: {
            message: "WebSocket upgrade failed.",
            type: "invalid_request_error",
            param: null,
            code: null,
          },
        }),
        { status: 400, headers: { "content-type": "application/json" } },
      );
    },
    handlers: responsesSocketHandlers(gateway),
  };
}
