// POST on a text protocol's path (/v1/responses, /v1/chat/completions, /v1/messages): one row per
// record in src/protocols/, built by the route table from the registry. Every text model is served
// on each; a channel that speaks another protocol gets the request translated.
import type { Gateway } from "../gateway.ts";
import type { RequestContext } from "../http/context.ts";
import { serveText, type TextEndpoint } from "../pipeline/text.ts";

/** A text protocol's row; its body is read by the edge (`withBody` in src/server.ts). */
export function textRow(
  endpoint: TextEndpoint,
): (ctx: RequestContext, gateway: Gateway, raw: Uint8Array) => Promise<Response> {
  return (ctx, gateway, raw) => serveText(ctx, gateway, endpoint, raw);
}
