// OpenAI Responses (`POST /v1/responses`, and its WebSocket mode): spoken by channel kind
// "openai-responses" and by the simulator. Its record: see ../adapter.ts.
import { isObject } from "../../base/plain-object.ts";
import { decodeResponsesRequest } from "../../wire/responses.ts";
import { sseJson } from "../../wire/sse.ts";
import { arr } from "../../wire/translate/narrow.ts";
import { ResponsesFunctionCall } from "../../wire/translate/reply-check.ts";
import { ResponsesReader, readResponsesReply } from "../../wire/translate/responses-reader.ts";
import {
  readResponsesRequest,
  viewOfResponses,
  writeResponsesRequest,
} from "../../wire/translate/responses-request.ts";
import { ResponsesWriter } from "../../wire/translate/responses-writer.ts";
import type { DecodedText, TextAdapter } from "../adapter.ts";
import { serviceTier } from "../forwarding.ts";
import { responsesBound } from "./bound.ts";
import { openaiErrorMessage } from "./errors.ts";
import { responseObject, responsesEvents } from "./sim.ts";
import { ResponsesStreamUsage, responsesAnswerUsage } from "./usage.ts";

/** Decodes a Responses body (HTTP, or a WebSocket `response.create` after expansion). */
function decodeResponses(json: unknown): DecodedText {
  const request = decodeResponsesRequest(json);
  return { view: viewOfResponses(request), body: request, ir: () => readResponsesRequest(request) };
}

export const responses: TextAdapter<"responses"> = {
  name: "responses",
  path: "/v1/responses",
  provider: "openai",
  errorShape: "openai",
  outputCapField: "max_output_tokens",
  inputField: "input",
  decode: decodeResponses,
  translate: {
    writeRequest: writeResponsesRequest,
    readReply: readResponsesReply,
    reader: () => new ResponsesReader(),
    // A Responses answer echoes the request's parameters, as the API does.
    writer: (model, _inputEstimate, request) => new ResponsesWriter(model, request),
    toolCalls: (json) =>
      arr(json.output).flatMap((item, i) =>
        isObject(item) && item.type === "function_call"
          ? [{ path: `output[${i}]`, item, schema: ResponsesFunctionCall }]
          : [],
      ),
    // `response.created` carries the response as it stands; `response.failed` repeats it.
    startCarriesAnswer: true,
  },
  usage: { stream: () => new ResponsesStreamUsage(), answer: responsesAnswerUsage },
  errorMessage: openaiErrorMessage,
  // `error`, then `response.failed` when the client saw `response.created`.
  failureEvents(stream, message) {
    const seq = stream.events;
    const out = [
      sseJson("error", {
        type: "error",
        code: "upstream_failed",
        message,
        param: null,
        sequence_number: seq,
      }),
    ];
    if (stream.created) {
      const response = { ...stream.created, status: "failed", error: { code: "server_error", message } };
      out.push(sseJson("response.failed", { type: "response.failed", sequence_number: seq + 1, response }));
    }
    return out;
  },
  // The incomplete reason when there is one, else the status.
  finishReasons(json) {
    const details = isObject(json.incomplete_details) ? json.incomplete_details.reason : undefined;
    if (typeof details === "string") return [details];
    return typeof json.status === "string" ? [json.status] : [];
  },
  forwarding: {
    rules: [
      serviceTier(["auto", "default"]),
      {
        field: "background",
        refuse: (value) =>
          value === true
            ? "background responses run after this request ends, so the gateway cannot relay or bill them; send background: false"
            : undefined,
      },
    ],
    classifyTool(type) {
      if (type.startsWith("web_search")) return "web_search";
      if (type === "file_search") return "file_search";
      if (type === "code_interpreter") return "code_interpreter";
      if (type === "image_generation") return "image_generation";
      return undefined;
    },
  },
  bound: { formula: "openai", walk: responsesBound },
  sim: {
    render(body, _headers, now) {
      const req = decodeResponsesRequest(body);
      return {
        view: viewOfResponses(req),
        json: (plan) => responseObject(req, plan, now, true),
        events: (plan) => responsesEvents(req, plan, now),
      };
    },
  },
};
