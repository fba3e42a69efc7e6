// Speech to text: transcriptions and translations (multipart uploads); the rows
// src/handlers/transcriptions.ts, the wire module src/wire/transcriptions.ts, the run
// src/pipeline/transcriptions.ts, the send src/upstream/transcriptions.ts, the simulator
// src/sim/transcriptions.ts. The paths are named by the task (AudioTask).
import type { EndpointRecord } from "../record.ts";

export const speechToText: EndpointRecord<"transcription", "transcription" | "translation"> = {
  family: "transcription",
  modelNoun: "a transcription model",
  servedOn: "POST /v1/audio/transcriptions (or /v1/audio/translations)",
  paths: { transcription: "/v1/audio/transcriptions", translation: "/v1/audio/translations" },
};
