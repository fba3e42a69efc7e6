// Embeddings: the row src/handlers/embeddings.ts, the wire module src/wire/embeddings.ts, the run
// src/pipeline/embeddings.ts, the send src/upstream/embeddings.ts, the simulator src/sim/embeddings.ts.
import type { EndpointRecord } from "../record.ts";

export const embeddings: EndpointRecord<"embedding", "embeddings"> = {
  family: "embedding",
  modelNoun: "an embedding model",
  servedOn: "POST /v1/embeddings",
  paths: { embeddings: "/v1/embeddings" },
};
