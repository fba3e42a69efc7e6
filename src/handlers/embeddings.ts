// POST /v1/embeddings as a table row: the JSON body decoded (src/wire/embeddings.ts), the model an
// embedding model the key may use, `dimensions` within what the model allows, every input counted
// against the model's limits (each input named when it is over; many long inputs counted by the
// token thread, off the event loop), then the embeddings run (src/pipeline/embeddings.ts).
import type { ModelInfo } from "../catalog/models.ts";
import { countEachTokens } from "../catalog/token-thread.ts";
import { embeddings } from "../endpoints/embeddings/index.ts";
import type { Gateway } from "../gateway.ts";
import type { RequestContext } from "../http/context.ts";
import { authenticate } from "../pipeline/authenticate.ts";
import { runEmbeddings } from "../pipeline/embeddings.ts";
import { requireFamily, requireModel } from "../pipeline/model.ts";
import {
  decodeEmbeddingBody,
  type EmbeddingBody,
  type EmbeddingInputs,
  readInputs,
} from "../wire/embeddings.ts";
import { GatewayError } from "../wire/errors.ts";
import { parseJson } from "../wire/json.ts";

/** `dimensions` only on a model that shortens its vectors, and at most its full size (422). */
function checkDimensions(model: ModelInfo, body: EmbeddingBody): void {
  const facts = model.embedding;
  if (body.dimensions === undefined || facts === undefined) return;
  if (!facts.shortens) {
    throw new GatewayError(
      "invalid_request",
      `dimensions is not supported by \`${model.id}\`: its vectors always have ${facts.dimensions} values; leave dimensions out`,
      { param: "dimensions" },
    );
  }
  if (body.dimensions > facts.dimensions) {
    throw new GatewayError(
      "invalid_value",
      `dimensions is ${body.dimensions}, above the ${facts.dimensions} values of \`${model.id}\`; ask for 1 to ${facts.dimensions}`,
      { param: "dimensions" },
    );
  }
}

/**
 * The inputs' tokens: each within the model's per-input limit (naming `input[i]`), all together
 * within its per-request limit (the first input over either is named). Text inputs are counted
 * together (countEachTokens: in place when short in all, else in the token thread); token-id
 * inputs are their length.
 */
export async function countInputs(model: ModelInfo, inputs: EmbeddingInputs, owner = ""): Promise<number> {
  const perInput = model.embedding?.maxInputTokens ?? model.contextTokens;
  const perRequest = model.embedding?.maxRequestTokens ?? Number.POSITIVE_INFINITY;
  const single = inputs.items.length === 1;
  const counts =
    inputs.kind === "text"
      ? await countEachTokens(inputs.items, undefined, owner)
      : inputs.items.map((ids) => ids.length);
  let total = 0;
  for (const [i, tokens] of counts.entries()) {
    if (tokens > perInput) {
      const at = single ? "input" : `input[${i}]`;
      throw new GatewayError(
        "invalid_request",
        `${at} is ${tokens} tokens, more than the ${perInput} one input of \`${model.id}\` may hold; shorten or split it`,
        { param: at },
      );
    }
    total += tokens;
    if (total > perRequest) {
      throw new GatewayError(
        "invalid_request",
        `input holds more than ${perRequest} tokens in all (over the limit at input[${i}]); send fewer inputs per request`,
        { param: "input" },
      );
    }
  }
  return total;
}

/** The route's row; its body is read by the edge (`withBody` in src/server.ts). */
export async function createEmbeddings(
  ctx: RequestContext,
  gateway: Gateway,
  raw: Uint8Array,
): Promise<Response> {
  const principal = authenticate(ctx, gateway);
  const body = decodeEmbeddingBody(parseJson(raw));
  const model = requireFamily(
    requireModel(principal, body.model, gateway.aliases),
    ["embedding"],
    embeddings.paths.embeddings,
  );
  checkDimensions(model, body);
  const inputs = readInputs(body.input);
  const inputTokens = await countInputs(model, inputs, principal.keyId);
  const alias = body.model === model.id ? undefined : body.model;
  return runEmbeddings(ctx, gateway, { principal, model, alias, body, inputs, inputTokens });
}
