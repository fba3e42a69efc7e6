// POST /v1/embeddings on the wire (OpenAI's CreateEmbeddingRequest / CreateEmbeddingResponse): the
// request body checked field by field (400 naming the field, 422 for a number out of range), its
// `input` read into one list of inputs (strings or token-id arrays), an upstream's answer read
// leniently (vectors as float arrays or base64) and the client's answer written in the encoding
// it asked for. No I/O.
import * as v from "valibot";
import { parseOrThrow } from "./decode.ts";
import { GatewayError } from "./errors.ts";

/** The most inputs one request may carry (the reference's `maxItems`). */
export const MAX_EMBEDDING_INPUTS = 2048;

export const ENCODING_FORMATS = ["float", "base64"] as const;
export type EncodingFormat = (typeof ENCODING_FORMATS)[number];

/** The request's fields; `input` is read on its own (readInputs) so each problem names its item. */
export const EmbeddingBodySchema = v.strictObject({
  model: v.pipe(v.string("model must be a string"), v.minLength(1, "model must not be empty")),
  input: v.unknown(),
  encoding_format: v.optional(
    v.picklist(ENCODING_FORMATS, 'encoding_format must be "float" or "base64"'),
    "float",
  ),
  dimensions: v.optional(
    v.pipe(
      v.number("dimensions must be a number"),
      v.integer("dimensions must be a whole number"),
      v.minValue(1),
    ),
  ),
  user: v.optional(v.string("user must be a string")),
});

export type EmbeddingBody = v.InferOutput<typeof EmbeddingBodySchema>;

/** The inputs of a request, in order: texts, or token-id arrays (never mixed). */
export type EmbeddingInputs = { kind: "text"; items: string[] } | { kind: "tokens"; items: number[][] };

function bad(message: string, param: string): GatewayError {
  return new GatewayError("invalid_request", message, { param });
}

/** The body checked: an object with the reference's fields (an unknown field is named). */
export function decodeEmbeddingBody(raw: unknown): EmbeddingBody {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new GatewayError("invalid_request", "request body must be a JSON object with model and input");
  }
  if (!("input" in raw))
    throw bad("input is required: a string, an array of strings or of token ids", "input");
  return parseOrThrow(EmbeddingBodySchema, raw);
}

function isTokenId(value: unknown): value is number {
  return typeof value === "number" && Number.isInteger(value) && value >= 0;
}

/** One token-id array, checked; `at` names it in errors. */
function tokenArray(value: readonly unknown[], at: string): number[] {
  if (value.length === 0) throw bad(`${at} is an empty token array; send at least one token id`, at);
  const wrong = value.findIndex((id) => !isTokenId(id));
  if (wrong >= 0) {
    throw bad(
      `${at}[${wrong}] must be a token id (a whole number ≥ 0), got ${JSON.stringify(value[wrong])}`,
      at,
    );
  }
  return value as number[];
}

/**
 * `input` as the reference takes it: a string, an array of strings, an array of token ids, or an
 * array of token-id arrays; never empty, at most 2,048 inputs, no empty string.
 */
export function readInputs(input: unknown): EmbeddingInputs {
  if (typeof input === "string") {
    if (input.length === 0) throw bad("input must not be an empty string", "input");
    return { kind: "text", items: [input] };
  }
  if (!Array.isArray(input)) {
    throw bad(
      "input must be a string, an array of strings, an array of token ids or an array of token-id arrays",
      "input",
    );
  }
  if (input.length === 0) throw bad("input is an empty array; send at least one input", "input");
  if (input.length > MAX_EMBEDDING_INPUTS) {
    throw bad(
      `input holds ${input.length} items; at most ${MAX_EMBEDDING_INPUTS} inputs fit in one request, split it`,
      "input",
    );
  }
  const first = input[0];
  if (typeof first === "number") return { kind: "tokens", items: [tokenArray(input, "input")] };
  if (Array.isArray(first)) {
    const items = input.map((item, i) => {
      if (!Array.isArray(item))
        throw bad(`input[${i}] must be a token-id array like the other items`, `input[${i}]`);
      return tokenArray(item, `input[${i}]`);
    });
    return { kind: "tokens", items };
  }
  const items = input.map((item, i) => {
    if (typeof item !== "string") {
      throw bad(
        `input[${i}] must be a string like the other items, got ${JSON.stringify(item)}`,
        `input[${i}]`,
      );
    }
    if (item.length === 0)
      throw bad(`input[${i}] is an empty string; remove it or give it text`, `input[${i}]`);
    return item;
  });
  return { kind: "text", items };
}

/** One vector as it travels: a float array, or base64 of its little-endian float32 values. */
export type Vector = number[] | string;

/** The base64 form of a vector (what the official SDKs ask for and decode). */
export function vectorToBase64(values: readonly number[]): string {
  // From an array-like, not an iterable: the typed array's fast copy (Float32Array.from iterates).
  const floats = new Float32Array(values as number[]);
  return Buffer.from(floats.buffer, floats.byteOffset, floats.byteLength).toString("base64");
}

/** The float values of a base64 vector; undefined when its length is not whole float32 values. */
export function vectorFromBase64(text: string): number[] | undefined {
  const bytes = Buffer.from(text, "base64");
  if (bytes.byteLength % 4 !== 0) return undefined;
  // A Float32Array needs 4-byte alignment: a pooled Buffer may start anywhere, so it is copied
  // (a typed-array copy; Uint8Array.from would iterate byte by byte).
  const aligned = bytes.byteOffset % 4 === 0 ? bytes : new Uint8Array(bytes);
  const floats = new Float32Array(aligned.buffer, aligned.byteOffset, aligned.byteLength / 4);
  const out = new Array<number>(floats.length);
  for (let i = 0; i < floats.length; i++) out[i] = floats[i] as number;
  return out;
}

/** A vector in the encoding the client asked for. */
export function encodeVector(vector: Vector, format: EncodingFormat): Vector | undefined {
  if (format === "float") return typeof vector === "string" ? vectorFromBase64(vector) : vector;
  return typeof vector === "string" ? vector : vectorToBase64(vector);
}

/** How many values a vector holds. */
export function vectorLength(vector: Vector): number {
  return typeof vector === "string"
    ? Math.floor((Buffer.byteLength(vector, "base64") || 0) / 4)
    : vector.length;
}

/** An upstream's answer, read leniently: what billing and the client's answer need. */
export const UpstreamEmbeddingsSchema = v.object({
  data: v.array(
    v.object({
      index: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
      embedding: v.union([v.array(v.number()), v.string()]),
    }),
  ),
  usage: v.optional(
    v.object({
      prompt_tokens: v.optional(v.number()),
      total_tokens: v.optional(v.number()),
    }),
  ),
});

export type UpstreamEmbeddings = v.InferOutput<typeof UpstreamEmbeddingsSchema>;

export interface EmbeddingItem {
  object: "embedding";
  index: number;
  embedding: Vector;
}

/** The answer a client gets (CreateEmbeddingResponse). */
export interface EmbeddingAnswer {
  object: "list";
  data: EmbeddingItem[];
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
}

/**
 * The client's answer from an upstream's: one vector per input, in input order (by `index`, else
 * as listed), each in the client's encoding; undefined-free or a description of what is wrong.
 */
export function answerOf(
  upstream: UpstreamEmbeddings,
  inputs: number,
  model: string,
  format: EncodingFormat,
  promptTokens: number,
): EmbeddingAnswer | string {
  if (upstream.data.length !== inputs) return `${upstream.data.length} vectors for ${inputs} inputs`;
  const slots: (EmbeddingItem | undefined)[] = new Array(inputs).fill(undefined);
  for (const [position, item] of upstream.data.entries()) {
    const index = item.index ?? position;
    if (index >= inputs || slots[index] !== undefined)
      return `vector index ${index} is out of order or repeated`;
    const embedding = encodeVector(item.embedding, format);
    if (embedding === undefined) return `vector ${index} is not whole float32 values`;
    slots[index] = { object: "embedding", index, embedding };
  }
  return {
    object: "list",
    data: slots as EmbeddingItem[],
    model,
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
  };
}
