// The endpoint families, one record each (the record's shape: record.ts): a new family is its
// folder here and one line below (and a member of `Family`, src/catalog/models.ts, which then
// requires the line). The text families' paths are the text protocols' (src/protocols/).
import type { Family } from "../catalog/models.ts";
import { speechToText } from "./audio/index.ts";
import { embeddings } from "./embeddings/index.ts";
import { images } from "./images/index.ts";
import type { EndpointRecord } from "./record.ts";
import { speech } from "./speech/index.ts";
import { messages, text } from "./text/index.ts";

export const ENDPOINTS: { readonly [F in Family]: EndpointRecord<F> } = {
  text,
  messages,
  image: images,
  embedding: embeddings,
  transcription: speechToText,
  speech,
};

/** The record of the family `family`. */
export function endpointOf(family: Family): EndpointRecord {
  return ENDPOINTS[family];
}

/** Every path an endpoint family is served on. */
export const ENDPOINT_PATHS: readonly string[] = [
  ...new Set(Object.values(ENDPOINTS).flatMap((record: EndpointRecord) => Object.values(record.paths))),
];
