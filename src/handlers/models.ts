// GET /v1/models and /v1/models/{id}: the models the key can reach — allowed by its group and
// served by a configured channel that can make that kind of model (a text channel for text and
// messages models, an images channel for image models, a channel serving embeddings for
// embedding models) — in the client's list shape: OpenAI's,
// Anthropic's for clients that send a version header, Codex's catalog when Codex asks for it.
// The aliases the key's group sees (`[aliases]`) are listed after the catalog, each under its own
// name with its target's facts, when the key may use and the gateway can serve the target.

import * as v from "valibot";
import type { Principal } from "../auth/keys.ts";
import type { ModelId } from "../base/types.ts";
import { describeIssues } from "../base/validation.ts";
import type { Family, ModelInfo } from "../catalog/models.ts";
import type { Gateway } from "../gateway.ts";
import type { RequestContext } from "../http/context.ts";
import { authenticate } from "../pipeline/authenticate.ts";
import { upstreamProtocol } from "../pipeline/channels.ts";
import { requireModel } from "../pipeline/model.ts";
import type { Channel } from "../upstream/channels.ts";
import { servesImages } from "../upstream/images.ts";
import { mediaTransport } from "../upstream/media.ts";
import { GatewayError } from "../wire/errors.ts";
import { anthropicModel, anthropicModelList, openaiModel, openaiModelList } from "../wire/models.ts";
import { codexModelList } from "../wire/models-codex.ts";

/** Whether some configured channel can answer requests for `model` (otherwise they would be 503). */
function served(gateway: Gateway, model: ModelInfo): boolean {
  return gateway.channels.forModel(model.id).some((channel) => servesFamily(channel, model.family));
}

/** Whether `channel` can serve a model of `family`. */
function servesFamily(channel: Channel, family: Family): boolean {
  switch (family) {
    case "image":
      return servesImages(channel);
    case "embedding":
      return mediaTransport(channel, "embeddings") !== undefined;
    case "transcription":
      return mediaTransport(channel, "transcriptions") !== undefined;
    case "speech":
      return mediaTransport(channel, "speech") !== undefined;
    case "text":
    case "messages":
      return upstreamProtocol(channel, "responses") !== undefined;
    default: {
      const never: never = family;
      throw new Error(`unknown model family ${String(never)}`);
    }
  }
}

/** The models the key may use and the gateway can serve, in catalog order, then its aliases by name. */
function reachableModels(gateway: Gateway, principal: Principal): ModelInfo[] {
  const models = principal.models.models().filter((model) => served(gateway, model));
  for (const { alias, target } of gateway.aliases.entries(principal.group)) {
    if (principal.models.allows(target.id) && served(gateway, target)) models.push(asAlias(alias, target));
  }
  return models;
}

/** An alias as a model list shows it: its own name, its target's facts. */
function asAlias(alias: string, target: ModelInfo): ModelInfo {
  return { ...target, id: alias as ModelId };
}

/** Codex asks for its catalog with `?client_version=…` (openai/codex models endpoint). */
function wantsCodexCatalog(url: URL): boolean {
  return url.searchParams.has("client_version");
}

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
  const models = reachableModels(gateway, principal);
  const url = new URL(ctx.request.url);
  if (wantsCodexCatalog(url)) return Response.json(codexModelList(models));
  if (!wantsAnthropic(ctx.request)) return Response.json(openaiModelList(models));
  // An Anthropic client lists what it can call in its own protocol (and, as before, the image
  // models); embedding and audio models have no Messages form.
  const listed = models.filter(
    (m) => m.family !== "embedding" && m.family !== "transcription" && m.family !== "speech",
  );
  const query = v.safeParse(AnthropicQuery, Object.fromEntries(url.searchParams));
  if (!query.success) throw new GatewayError("invalid_request", describeIssues(query.issues));
  return Response.json(
    anthropicModelList(listed, {
      limit: query.output.limit,
      afterId: query.output.after_id,
      beforeId: query.output.before_id,
    }),
  );
}

export function getModel(ctx: RequestContext, gateway: Gateway, params: Record<string, string>): Response {
  const principal = authenticate(ctx, gateway);
  // The router has already decoded the path parameter: decoding it again would read `%25` twice
  // and throw (a 500) on an escape that only the second pass finds broken.
  const id = params.id ?? "";
  const model = requireModel(principal, id, gateway.aliases, "not_found");
  if (!served(gateway, model)) {
    throw new GatewayError(
      "not_found",
      `The model \`${model.id}\` is not served by any configured channel of this gateway; GET /v1/models lists the models this key can use.`,
      { code: "model_not_found", param: "model" },
    );
  }
  const shown = model.id === id ? model : asAlias(id, model);
  return Response.json(wantsAnthropic(ctx.request) ? anthropicModel(shown) : openaiModel(shown));
}
