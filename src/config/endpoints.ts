// The `[endpoints]` configuration section: which text endpoints serve which model, and the limits
// of the Responses WebSocket mode. By default every text model (modelx text ids and modelz ids)
// is served on all three text endpoints, translating when the channel speaks another protocol.
//
//   [endpoints.models]
//   "modelz-opus-4-7" = ["messages"]          # only /v1/messages
//   "modelx-5.5" = ["responses", "chat"]      # not /v1/messages
import * as v from "valibot";
import { findModel } from "../catalog/models.ts";
import { wholeNumber } from "./blocks.ts";

export const TEXT_ENDPOINTS = ["responses", "chat", "messages"] as const;

const TextModelId = v.pipe(
  v.string(),
  v.check((id) => {
    const family = findModel(id)?.family;
    return family === "text" || family === "messages";
  }, "expected a text model id from the catalog (modelx text ids or modelz ids)"),
);

export const EndpointsConfigSchema = v.strictObject({
  /** Per model, the text endpoints (protocols) that serve it; a model not listed is served on all. */
  models: v.optional(
    v.record(
      TextModelId,
      v.pipe(v.array(v.picklist(TEXT_ENDPOINTS)), v.minLength(1, "list at least one endpoint")),
    ),
    {},
  ),
  /** Responses WebSocket mode: the most seconds one connection lives (OpenAI uses 60 minutes). */
  websocket_max_seconds: v.optional(v.pipe(v.number(), v.minValue(1), v.maxValue(86_400)), 3600),
  /** Responses WebSocket mode: how many earlier responses a connection remembers for previous_response_id. */
  websocket_remembered_responses: v.optional(wholeNumber(1, 256), 16),
});

export type EndpointsConfig = v.InferOutput<typeof EndpointsConfigSchema>;
