// POST /v1/chat/completions: the OpenAI Chat Completions endpoint (text-family models).
import type { Gateway } from "../gateway.ts";
import type { RequestContext } from "../http/context.ts";
import { serveText, type TextEndpoint } from "../relay/text.ts";
import { decodeChatRequest, viewOfChat } from "../wire/chat.ts";

const ENDPOINT: TextEndpoint = {
  path: "/v1/chat/completions",
  family: "text",
  familyHint: "modelz models speak the Messages protocol; call POST /v1/messages.",
  decode(json) {
    const request = decodeChatRequest(json);
    const view = viewOfChat(request);
    // The gateway always asks a streaming upstream for usage (billing needs it); the relay drops
    // that chunk again when the client did not ask for it.
    const overrides =
      view.stream && !view.includeUsage
        ? { stream_options: { ...request.stream_options, include_usage: true } }
        : undefined;
    return { view, body: request, ...(overrides ? { overrides } : {}) };
  },
};

export function createChatCompletion(ctx: RequestContext, gateway: Gateway): Promise<Response> {
  return serveText(ctx, gateway, ENDPOINT);
}
