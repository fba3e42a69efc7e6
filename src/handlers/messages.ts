// POST /v1/messages/count_tokens: the Anthropic Messages token count (POST /v1/messages itself is
// the text row of its record, src/protocols/messages/, handlers/text.ts). Query parameters such as
// Claude Code's `?beta=true` are accepted and ignored.
import { countPromptTokens } from "../catalog/token-thread.ts";
import type { Gateway } from "../gateway.ts";
import type { RequestContext } from "../http/context.ts";
import { authenticate } from "../pipeline/authenticate.ts";
import { requireTextModel } from "../pipeline/text.ts";
import { parseJson } from "../wire/json.ts";
import { decodeCountTokensRequest, requireVersion } from "../wire/messages.ts";
import { viewOfMessages } from "../wire/translate/messages-request.ts";

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
  return Response.json({
    input_tokens: await countPromptTokens(viewOfMessages(request).promptText, undefined, principal.keyId),
  });
}
