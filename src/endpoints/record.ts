// What one endpoint family is, as one record: the model family it serves, how a refusal names
// its models and where they are served, and its paths (each a row of the gateway's route table,
// src/server.ts, and a route of the simulator; test/unit/architecture.test.ts checks both).
// Filled in the family's folder (src/endpoints/<family>/index.ts) and registered in
// src/endpoints/index.ts; its stage modules (row, wire module, run, upstream send, simulator)
// read their paths here. A record missing a field does not compile.
import type { Family } from "../catalog/models.ts";

export interface EndpointRecord<F extends Family = Family, Path extends string = string> {
  /** The model family its models belong to (the registry key). */
  readonly family: F;
  /** How a refusal names one of its models: "an embedding model". */
  readonly modelNoun: string;
  /** Where its models are served, as a refusal sends a client there ("POST /v1/embeddings"). */
  readonly servedOn: string;
  /** Its paths by name, every one served with POST. */
  readonly paths: Readonly<Record<Path, string>>;
}
