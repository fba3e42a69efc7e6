// Probes: `/` (coding CLIs probe it before their first call), `/healthz` (alive), `/readyz` (store
// reachable; details of every channel: priority, requests in flight, circuit state).
import { type Gateway, VERSION } from "../gateway.ts";
import type { RequestContext } from "../http/context.ts";

export function root(): Response {
  return Response.json({
    name: "modelgate",
    version: VERSION,
    docs: "GET /v1/models lists the models your key may use",
  });
}

export function healthz(): Response {
  return Response.json({ status: "ok" });
}

export async function readyz(_ctx: RequestContext, gateway: Gateway): Promise<Response> {
  try {
    await gateway.store.ping();
    return Response.json({ status: "ready", store: "ok", channels: channelDetails(gateway) });
  } catch (error) {
    return Response.json(
      {
        status: "not_ready",
        store: error instanceof Error ? error.message : String(error),
        channels: channelDetails(gateway),
      },
      { status: 503 },
    );
  }
}

function channelDetails(gateway: Gateway) {
  return gateway.channels.all().map((channel) => channel.status());
}
