// The simulator's POST /v1/embeddings, shaped like the real one: the request decoded as the
// gateway decodes it, one unit-length vector per input from a seeded hash of the model and the
// input (equal inputs give equal vectors), the model's dimension from the catalog (or
// `dimensions`: the full vector cut and scaled back to unit length, as shortening models do),
// float or base64 as asked, and usage counted with the gateway's tokenizer (long inputs in its
// token thread). An input
// `sim:error NNN` answers that status (tests of failover and of uncharged failures). Served over
// HTTP (`modelgate sim`) and in process by the `sim` channel kind.

import { findModel } from "../catalog/models.ts";
import { countEachTokens } from "../catalog/token-thread.ts";
import { embeddings } from "../endpoints/embeddings/index.ts";
import {
  decodeEmbeddingBody,
  type EmbeddingAnswer,
  type EmbeddingInputs,
  readInputs,
  vectorToBase64,
} from "../wire/embeddings.ts";
import { GatewayError } from "../wire/errors.ts";
import { hashString, Rng } from "./random.ts";
import type { SimRoute, SimServerOptions } from "./routes.ts";
import { simError } from "./text/errors.ts";

/** The dimension of a model the catalog does not know (a model_map target). */
const DEFAULT_DIMENSIONS = 768;

/** A deterministic unit-length vector of `length` values for `key`. */
export function simVector(seed: number, model: string, key: string, length: number): number[] {
  const rng = new Rng(hashString(key, hashString(model, seed)));
  const values = new Array<number>(length);
  let sum = 0;
  for (let i = 0; i < length; i++) {
    const value = rng.next() * 2 - 1;
    values[i] = value;
    sum += value * value;
  }
  const norm = Math.sqrt(sum) || 1;
  // float32 values, as real servers send: the float and base64 answers of one input are equal.
  for (let i = 0; i < length; i++) values[i] = Math.fround((values[i] ?? 0) / norm);
  return values;
}

/** The vector of one input, cut to `dimensions` and made unit length again. */
function vectorOf(seed: number, model: string, key: string, full: number, dimensions: number): number[] {
  const vector = simVector(seed, model, key, full);
  if (dimensions >= full) return vector;
  const cut = vector.slice(0, dimensions);
  const norm = Math.sqrt(cut.reduce((sum, x) => sum + x * x, 0)) || 1;
  return cut.map((x) => Math.fround(x / norm));
}

function keysOf(inputs: EmbeddingInputs): string[] {
  return inputs.kind === "text" ? inputs.items : inputs.items.map((ids) => `tokens:${ids.join(",")}`);
}

/** The inputs' tokens; long texts counted off the event loop, as the gateway counts them. */
async function tokensOf(inputs: EmbeddingInputs): Promise<number> {
  if (inputs.kind === "tokens") return inputs.items.reduce((sum, ids) => sum + ids.length, 0);
  return (await countEachTokens(inputs.items)).reduce((sum, count) => sum + count, 0);
}

/** The status an input asks for with `sim:error NNN`, if one does. */
function askedError(inputs: EmbeddingInputs): number | undefined {
  if (inputs.kind !== "text") return undefined;
  for (const text of inputs.items) {
    const match = /^sim:error (\d{3})$/.exec(text);
    if (match) return Number(match[1]);
  }
  return undefined;
}

/** Answers one simulated embeddings request. */
export async function simEmbeddings(request: Request, seed: number): Promise<Response> {
  let answer: EmbeddingAnswer;
  try {
    const body = decodeEmbeddingBody(await request.json());
    const inputs = readInputs(body.input);
    const status = askedError(inputs);
    if (status !== undefined)
      return simError("openai", status, `simulator: error ${status} requested by sim:error`);
    const full = findModel(body.model)?.embedding?.dimensions ?? DEFAULT_DIMENSIONS;
    const dimensions = body.dimensions ?? full;
    const tokens = await tokensOf(inputs);
    answer = {
      object: "list",
      data: keysOf(inputs).map((key, index) => {
        const vector = vectorOf(seed, body.model, key, full, dimensions);
        return {
          object: "embedding",
          index,
          embedding: body.encoding_format === "base64" ? vectorToBase64(vector) : vector,
        };
      }),
      model: body.model,
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    };
  } catch (thrown) {
    if (thrown instanceof GatewayError)
      return simError("openai", thrown.status, `simulator: ${thrown.message}`);
    if (thrown instanceof SyntaxError)
      return simError("openai", 400, `simulator: malformed JSON body: ${thrown.message}`);
    throw thrown;
  }
  return Response.json(answer);
}

/** The simulator's HTTP route for embeddings. */
export const SIM_EMBEDDING_ROUTES: readonly SimRoute[] = [
  {
    method: "POST",
    path: embeddings.paths.embeddings,
    handle: (r: Request, o: SimServerOptions) => simEmbeddings(r, o.seed),
  },
];
