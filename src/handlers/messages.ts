// POST /v1/messages and /v1/messages/count_tokens: the Anthropic Messages endpoints (modelz models).
// The version header (`modelz-version` or `anthropic-version`) is required; `anthropic-beta` is
// passed on to an Anthropic upstream.
import { requireModel } from "../auth/permissions.ts";
import { countTokens } from "../catalog/tokenizer.ts";
import type { Gateway } from "../gateway.ts";
import type { RequestContext } from "../http/context.ts";
import { parseJson, readBody } from "../relay/body.ts";
import { serveText, type TextEndpoint } from "../relay/text.ts";
import { GatewayError } from "../wire/errors.ts";
import {
  decodeCountTokensRequest,
  decodeMessagesRequest,
  requireVersion,
  viewOfMessages,
} from "../wire/messages.ts";
import { authenticate } from "./auth.ts";

const FAMILY_HINT =
  "modelx text models speak the Responses and Chat Completions protocols; call POST /v1/responses.";

const ENDPOINT: TextEndpoint = {
  path: "/v1/messages",
  family: "messages",
  familyHint: FAMILY_HINT,
  decode(json, headers) {
    const anthropicVersion = requireVersion(headers);
    const request = decodeMessagesRequest(json);
    const beta = headers.get("anthropic-beta");
    return {
      view: viewOfMessages(request),
      body: request,
      anthropicVersion,
      ...(beta ? { anthropicBeta: beta } : {}),
    };
  },
};

export function createMessage(ctx: RequestContext, gateway: Gateway): Promise<Response> {
  return serveText(ctx, gateway, ENDPOINT);
}

/** Counts input tokens with the gateway's tokenizer, as the simulator reports them; not billed. */
export async function countMessageTokens(ctx: RequestContext, gateway: Gateway): Promise<Response> {
  const raw = await readBody(ctx.request, gateway.config.text.max_body_bytes);
  const principal = authenticate(ctx, gateway);
  requireVersion(ctx.request.headers);
  const request = decodeCountTokensRequest(parseJson(raw));
  const model = requireModel(principal, request.model);
  if (model.family !== "messages") {
    throw new GatewayError(
      "invalid_request",
      `The model \`${model.id}\` is not served on /v1/messages: ${FAMILY_HINT}`,
      {
        param: "model",
      },
    );
  }
  return Response.json({ input_tokens: countTokens(viewOfMessages(request).promptText) });
}
