// Images: generations (JSON) and edits (multipart); rows in src/handlers/images*.ts, the run in
// src/pipeline/images.ts, the send in src/upstream/images.ts, the simulator in src/sim/images/.
import type { EndpointRecord } from "../record.ts";

export const images: EndpointRecord<"image", "generations" | "edits"> = {
  family: "image",
  modelNoun: "an image model",
  servedOn: "POST /v1/images/generations or /v1/images/edits",
  paths: { generations: "/v1/images/generations", edits: "/v1/images/edits" },
};
