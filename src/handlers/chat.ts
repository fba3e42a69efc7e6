// POST /v1/chat/completions: the OpenAI Chat Completions endpoint (every text model; translated
// when the channel speaks another protocol).
import type { Gateway } from "../gateway.ts";
import type { RequestContext } from "../http/context.ts";
import { serveText, type TextEndpoint } from "../pipeline/text.ts";
import { decodeChatRequest } from "../wire/chat.ts";
import { readChatRequest, viewOfChat } from "../wire/translate/index.ts";

const ENDPOINT: TextEndpoint = {
  path: "/v1/chat/completions",
  decode(json) {
    const request = decodeChatRequest(json);
    const view = viewOfChat(request);
    // The gateway always asks a streaming upstream for usage (billing needs it); the relay drops
    // that chunk again when the client did not ask for it.
    const overrides =
      view.stream && !view.includeUsage
        ? { stream_options: { ...request.stream_options, include_usage: true } }
        : undefined;
    return {
      view,
      body: request,
      choices: request.n ?? 1,
      ir: () => readChatRequest(request),
      ...(overrides ? { overrides } : {}),
    };
  },
};

/** The route's row; its body is read by the edge (`withBody` in src/server.ts). */
export function createChatCompletion(
  ctx: RequestContext,
  gateway: Gateway,
  raw: Uint8Array,
): Promise<Response> {
  return serveText(ctx, gateway, ENDPOINT, raw);
}
