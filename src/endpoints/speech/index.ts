// Speech: the row src/handlers/speech.ts, the wire module src/wire/speech.ts, the run
// src/pipeline/speech.ts, the send src/upstream/speech.ts, the simulator src/sim/speech.ts.
import type { EndpointRecord } from "../record.ts";

export const speech: EndpointRecord<"speech", "speech"> = {
  family: "speech",
  modelNoun: "a speech model",
  servedOn: "POST /v1/audio/speech",
  paths: { speech: "/v1/audio/speech" },
};
