// POST /v1/responses: the OpenAI Responses endpoint (every text model; translated when the
// channel speaks another protocol).
import type { Gateway } from "../gateway.ts";
import type { RequestContext } from "../http/context.ts";
import { type DecodedText, serveText, type TextEndpoint } from "../pipeline/text.ts";
import { decodeResponsesRequest } from "../wire/responses.ts";
import { readResponsesRequest, viewOfResponses } from "../wire/translate/index.ts";

/** Decodes a Responses body (HTTP, or a WebSocket `response.create` after expansion). */
export function decodeResponses(json: unknown): DecodedText {
  const request = decodeResponsesRequest(json);
  return { view: viewOfResponses(request), body: request, ir: () => readResponsesRequest(request) };
}

const ENDPOINT: TextEndpoint = { path: "/v1/responses", decode: decodeResponses };

/** The route's row; its body is read by the edge (`withBody` in src/server.ts). */
export function createResponse(ctx: RequestContext, gateway: Gateway, raw: Uint8Array): Promise<Response> {
  return serveText(ctx, gateway, ENDPOINT, raw);
}
