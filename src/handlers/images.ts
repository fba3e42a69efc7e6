// POST /v1/images/generations as a table row — its codec (the capped JSON body, every field
// validated, errors naming the field) and its job — and the run both image rows share:
// authenticate, decode, an image model allowed to the key, then the image pipeline
// (src/pipeline/images.ts, which calls the image upstreams).

import type { ModelInfo } from "../catalog/models.ts";
import { images } from "../endpoints/images/index.ts";
import type { Gateway } from "../gateway.ts";
import type { RequestContext } from "../http/context.ts";
import { authenticate } from "../pipeline/authenticate.ts";
import { type ImageRequest, runImages } from "../pipeline/images.ts";
import { requireFamily, requireModel } from "../pipeline/model.ts";
import { readJsonBody } from "../request/body.ts";
import { parseOrThrow } from "../wire/decode.ts";
import { GatewayError } from "../wire/errors.ts";
import { GenerationBodySchema, toImageOptions } from "../wire/images.ts";

/** An image endpoint: how its body is read and validated, and the job a valid body asks for. */
export interface ImageEndpoint<Body extends { model: string }> {
  path: string;
  /** The wire codec: reads the body (under its caps) into validated fields. */
  decode(request: Request): Promise<Body>;
  /** The upstream call's job, once the model is known to be an image model the key may use. */
  job(body: Body): ImageRequest["job"];
}

/** Refuses a model of another family on an image endpoint, naming where it is served. */
export function requireImageModel(model: ModelInfo, endpoint: string): ModelInfo {
  return requireFamily(model, ["image"], endpoint);
}

/** The fields of a loose body that the schema does not know: passed on to the upstream. */
export function unknownFields(
  body: Record<string, unknown>,
  known: Record<string, unknown>,
): Record<string, unknown> {
  return Object.fromEntries(Object.entries(body).filter(([name]) => !(name in known)));
}

/** One image row served: authenticated before any body is read. */
export async function serveImages<Body extends { model: string }>(
  ctx: RequestContext,
  gateway: Gateway,
  endpoint: ImageEndpoint<Body>,
): Promise<Response> {
  const principal = authenticate(ctx, gateway);
  const body = await endpoint.decode(ctx.request);
  const model = requireImageModel(requireModel(principal, body.model, gateway.aliases), endpoint.path);
  const alias = body.model === model.id ? undefined : body.model;
  return runImages(ctx, gateway, {
    principal,
    model,
    alias,
    endpoint: endpoint.path,
    job: endpoint.job(body),
  });
}

const GENERATIONS: ImageEndpoint<ReturnType<typeof parseGeneration>> = {
  path: images.paths.generations,
  decode: async (request) => parseGeneration(await readJsonBody(request)),
  job: (body) => ({
    kind: "generation",
    options: toImageOptions(body),
    images: [],
    mask: undefined,
    extra: unknownFields(body, GenerationBodySchema.entries),
  }),
};

function parseGeneration(raw: unknown) {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new GatewayError("invalid_request", "request body must be a JSON object with model and prompt");
  }
  return parseOrThrow(GenerationBodySchema, raw);
}

export function createImage(ctx: RequestContext, gateway: Gateway): Promise<Response> {
  return serveImages(ctx, gateway, GENERATIONS);
}
