// Probes: `/` (coding CLIs probe it before their first call), `/healthz` (alive), `/readyz` (both
// engines: the store and the limiter — Redis in cluster mode — reachable, else 503 naming the one
// that is down; details of every channel: priority, requests in flight, circuit state).
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
  const [store, limiter] = await Promise.all([
    check(() => gateway.store.ping()),
    check(async () => gateway.meter.pingLimiter?.()),
  ]);
  const ready = store === "ok" && limiter === "ok";
  return Response.json(
    { status: ready ? "ready" : "not_ready", store, limiter, channels: channelDetails(gateway) },
    { status: ready ? 200 : 503 },
  );
}

/** "ok", or why the engine cannot be reached. */
async function check(ping: () => Promise<unknown>): Promise<string> {
  try {
    await ping();
    return "ok";
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

function channelDetails(gateway: Gateway) {
  return gateway.channels.all().map((channel) => channel.status());
}
