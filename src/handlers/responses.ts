// POST /v1/responses: the OpenAI Responses endpoint (text-family models).
import type { Gateway } from "../gateway.ts";
import type { RequestContext } from "../http/context.ts";
import { serveText, type TextEndpoint } from "../relay/text.ts";
import { decodeResponsesRequest, viewOfResponses } from "../wire/responses.ts";

const ENDPOINT: TextEndpoint = {
  path: "/v1/responses",
  family: "text",
  familyHint: "modelz models speak the Messages protocol; call POST /v1/messages.",
  decode(json) {
    const request = decodeResponsesRequest(json);
    return { view: viewOfResponses(request), body: request };
  },
};

export function createResponse(ctx: RequestContext, gateway: Gateway): Promise<Response> {
  return serveText(ctx, gateway, ENDPOINT);
}
