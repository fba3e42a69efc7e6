// Strict schemas of the embeddings endpoint, written from OpenAI's published OpenAPI document
// (CreateEmbeddingRequest, CreateEmbeddingResponse, Embedding): what the gateway sends an
// OpenAI-kind channel (no field the reference does not list; `input` in one of its four shapes
// with its item bounds) and what it answers clients (a base64 vector is a string: the SDKs ask
// for it and decode it).
import * as v from "valibot";

const Tokens = v.pipe(v.array(v.pipe(v.number(), v.integer())), v.minLength(1));
const Bounded = <S extends v.GenericSchema>(item: S) =>
  v.pipe(v.array(item), v.minLength(1), v.maxLength(2048));

export const EmbeddingRequestSchema = v.strictObject({
  input: v.union([
    v.string(),
    Bounded(v.string()),
    Bounded(v.pipe(v.number(), v.integer())),
    Bounded(Tokens),
  ]),
  model: v.string(),
  encoding_format: v.optional(v.picklist(["float", "base64"])),
  dimensions: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
  user: v.optional(v.string()),
});

export const EmbeddingResponseSchema = v.strictObject({
  object: v.literal("list"),
  data: v.array(
    v.strictObject({
      object: v.literal("embedding"),
      index: v.pipe(v.number(), v.integer(), v.minValue(0)),
      embedding: v.union([v.array(v.number()), v.string()]),
    }),
  ),
  model: v.string(),
  usage: v.strictObject({
    prompt_tokens: v.pipe(v.number(), v.integer(), v.minValue(0)),
    total_tokens: v.pipe(v.number(), v.integer(), v.minValue(0)),
  }),
});
