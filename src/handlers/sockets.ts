// The WebSocket route table of the listener: today one row, the Responses WebSocket mode
// (`GET /v1/responses` with an Upgrade, src/handlers/responses-ws.ts).
import type { Gateway } from "../gateway.ts";
import type { SocketRoute } from "../http/websocket.ts";
import { GatewayError } from "../wire/errors.ts";
import { isResponsesUpgrade, responsesSocketHandlers, upgradeData } from "./responses-ws.ts";

/** The listener's socket route: upgrades Responses WebSocket requests, passes everything else. */
export function socketRoute(gateway: Gateway): SocketRoute {
  return {
    handle(request, server, peer) {
      if (!isResponsesUpgrade(request)) return "pass";
      const data = upgradeData(gateway, request, peer);
      if (data instanceof Response) return data;
      if (server.upgrade(request, { data })) return undefined;
      const error = new GatewayError("invalid_request", "WebSocket upgrade failed.");
      return new Response(JSON.stringify(error.toOpenAI()), {
        status: error.status,
        headers: { "content-type": "application/json" },
      });
    },
    handlers: responsesSocketHandlers(gateway),
  };
}
