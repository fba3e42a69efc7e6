// POST /v1/images/generations: authenticate, read the capped JSON body, validate every field
// (errors name the field), resolve an image model, then the shared image path.
import { requireModel } from "../auth/permissions.ts";
import type { ModelInfo } from "../catalog/models.ts";
import type { Gateway } from "../gateway.ts";
import { readJsonBody } from "../http/body.ts";
import type { RequestContext } from "../http/context.ts";
import { authenticate } from "../pipeline/authenticate.ts";
import { runImages } from "../pipeline/images.ts";
import { parseOrThrow } from "../wire/decode.ts";
import { GatewayError } from "../wire/errors.ts";
import { GenerationBodySchema, toImageOptions } from "../wire/images.ts";

/** Refuses a text or messages model on an image endpoint. */
export function requireImageModel(model: ModelInfo): ModelInfo {
  if (model.family === "image") return model;
  throw new GatewayError(
    "invalid_request",
    `model ${model.id} does not make images; use modelx-image-2, modelx-image-1.5 or modelx-image-1`,
    { param: "model" },
  );
}

/** The fields of a loose body that the schema does not know: passed on to the upstream. */
export function unknownFields(
  body: Record<string, unknown>,
  known: Record<string, unknown>,
): Record<string, unknown> {
  return Object.fromEntries(Object.entries(body).filter(([name]) => !(name in known)));
}

export async function createImage(ctx: RequestContext, gateway: Gateway): Promise<Response> {
  const principal = authenticate(ctx, gateway);
  const raw = await readJsonBody(ctx.request);
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new GatewayError("invalid_request", "request body must be a JSON object with model and prompt");
  }
  const body = parseOrThrow(GenerationBodySchema, raw);
  const model = requireImageModel(requireModel(principal, body.model));
  const options = toImageOptions(body);
  return runImages(ctx, gateway, {
    principal,
    model,
    endpoint: "/v1/images/generations",
    job: {
      kind: "generation",
      options,
      images: [],
      mask: undefined,
      extra: unknownFields(body, GenerationBodySchema.entries),
    },
  });
}
