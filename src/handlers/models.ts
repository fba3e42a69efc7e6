// GET /v1/models and /v1/models/{id}: the models the key's group allows, in the client's list shape.
import * as v from "valibot";
import { requireModel } from "../auth/permissions.ts";
import type { Gateway } from "../gateway.ts";
import type { RequestContext } from "../http/context.ts";
import { describeIssues } from "../validation.ts";
import { GatewayError } from "../wire/errors.ts";
import { anthropicModel, anthropicModelList, openaiModel, openaiModelList } from "../wire/models.ts";
import { authenticate } from "./auth.ts";

/** Anthropic clients send a version header; they get the Anthropic list shape. */
function wantsAnthropic(request: Request): boolean {
  return request.headers.has("anthropic-version") || request.headers.has("modelz-version");
}

const AnthropicQuery = v.object({
  limit: v.optional(
    v.pipe(
      v.string(),
      v.transform(Number),
      v.integer("limit must be a whole number"),
      v.minValue(1),
      v.maxValue(1000),
    ),
    "20",
  ),
  after_id: v.optional(v.string()),
  before_id: v.optional(v.string()),
});

export function listModels(ctx: RequestContext, gateway: Gateway): Response {
  const principal = authenticate(ctx, gateway);
  const models = principal.models.models();
  if (!wantsAnthropic(ctx.request)) return Response.json(openaiModelList(models));
  const query = v.safeParse(AnthropicQuery, Object.fromEntries(new URL(ctx.request.url).searchParams));
  if (!query.success) throw new GatewayError("invalid_request", describeIssues(query.issues));
  return Response.json(
    anthropicModelList(models, {
      limit: query.output.limit,
      afterId: query.output.after_id,
      beforeId: query.output.before_id,
    }),
  );
}

export function getModel(ctx: RequestContext, gateway: Gateway, params: Record<string, string>): Response {
  const principal = authenticate(ctx, gateway);
  const model = requireModel(principal, decodeURIComponent(params.id ?? ""), "not_found");
  return Response.json(wantsAnthropic(ctx.request) ? anthropicModel(model) : openaiModel(model));
}
