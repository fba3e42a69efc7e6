// POST /v1/messages and /v1/messages/count_tokens: the Anthropic Messages endpoints (every text
// model; translated when the channel speaks another protocol). The version header
// (`modelz-version` or `anthropic-version`) is required; `anthropic-beta` and body fields such as
// `context_management`, `output_config` and `thinking: {type: "adaptive"}` reach an Anthropic
// upstream unchanged (drop rules toward other protocols: src/wire/translate/messages-request.ts).
// Query parameters such as Claude Code's `?beta=true` are accepted and ignored.
import { countPromptTokens } from "../catalog/token-thread.ts";
import type { Gateway } from "../gateway.ts";
import type { RequestContext } from "../http/context.ts";
import { authenticate } from "../pipeline/authenticate.ts";
import { requireTextModel, serveText, type TextEndpoint } from "../pipeline/text.ts";
import { parseJson } from "../wire/json.ts";
import {
  decodeCountTokensRequest,
  decodeMessagesRequest,
  requireVersion,
  systemOverrides,
} from "../wire/messages.ts";
import { readMessagesRequest, viewOfMessages } from "../wire/translate/index.ts";

const ENDPOINT: TextEndpoint = {
  path: "/v1/messages",
  decode(json, headers) {
    const anthropicVersion = requireVersion(headers);
    const beta = headers.get("anthropic-beta");
    const request = decodeMessagesRequest(json, beta);
    const overrides = systemOverrides(request);
    return {
      view: viewOfMessages(request),
      body: request,
      ir: () => readMessagesRequest(request),
      anthropicVersion,
      ...(overrides ? { overrides } : {}),
      ...(beta ? { anthropicBeta: beta } : {}),
    };
  },
};

/** The route's row; its body is read by the edge (`withBody` in src/server.ts). */
export function createMessage(ctx: RequestContext, gateway: Gateway, raw: Uint8Array): Promise<Response> {
  return serveText(ctx, gateway, ENDPOINT, raw);
}

/** Counts input tokens with the gateway's tokenizer, as the simulator reports them; not billed. */
export async function countMessageTokens(
  ctx: RequestContext,
  gateway: Gateway,
  raw: Uint8Array,
): Promise<Response> {
  const principal = authenticate(ctx, gateway);
  requireVersion(ctx.request.headers);
  const request = decodeCountTokensRequest(parseJson(raw));
  requireTextModel(principal, gateway, request.model, "messages");
  return Response.json({ input_tokens: await countPromptTokens(viewOfMessages(request).promptText) });
}
