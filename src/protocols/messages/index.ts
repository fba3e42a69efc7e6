// Anthropic Messages (`POST /v1/messages`): spoken by channel kind "anthropic" and by the
// simulator. The version header (`modelz-version` or `anthropic-version`) is required;
// `anthropic-beta` and body fields such as `context_management`, `output_config` and
// `thinking: {type: "adaptive"}` reach an Anthropic upstream unchanged (drop rules toward other
// protocols: src/wire/translate/messages-request.ts). Its record: see ../adapter.ts.
import { isObject } from "../../base/plain-object.ts";
import { decodeMessagesRequest, requireVersion, systemOverrides } from "../../wire/messages.ts";
import { sseJson } from "../../wire/sse.ts";
import { MessagesReader, MessagesWriter, readMessagesReply } from "../../wire/translate/messages-reply.ts";
import {
  readMessagesRequest,
  viewOfMessages,
  writeMessagesRequest,
} from "../../wire/translate/messages-request.ts";
import { arr } from "../../wire/translate/narrow.ts";
import { MessagesToolUse } from "../../wire/translate/reply-check.ts";
import type { TextAdapter } from "../adapter.ts";
import { serviceTier } from "../forwarding.ts";
import { messagesBound } from "./bound.ts";
import { messagesErrorMessage } from "./errors.ts";
import { messageObject, messagesEvents } from "./sim.ts";
import { MessagesStreamUsage, messagesAnswerUsage } from "./usage.ts";

/** Billed by container hours, which no answer reports. */
const CONTAINER = { unpriced: "container time" };

export const messages: TextAdapter<"messages"> = {
  name: "messages",
  path: "/v1/messages",
  provider: "anthropic",
  errorShape: "anthropic",
  outputCapField: "max_tokens",
  inputField: "messages",
  decode(json, headers) {
    const anthropicVersion = requireVersion(headers);
    const beta = headers.get("anthropic-beta");
    const request = decodeMessagesRequest(json, beta);
    const overrides = systemOverrides(request);
    return {
      view: viewOfMessages(request),
      body: request,
      ir: () => readMessagesRequest(request),
      anthropicVersion,
      ...(overrides ? { overrides } : {}),
      ...(beta ? { anthropicBeta: beta } : {}),
    };
  },
  translate: {
    // `defaultMaxTokens` fills Messages' required cap.
    writeRequest: writeMessagesRequest,
    readReply: readMessagesReply,
    reader: () => new MessagesReader(),
    // `message_start` reports input usage before the answer: the gateway's count of the prompt.
    writer: (model, inputEstimate) => new MessagesWriter(model, inputEstimate),
    toolCalls: (json) =>
      arr(json.content).flatMap((block, i) =>
        isObject(block) && block.type === "tool_use"
          ? [{ path: `content[${i}]`, item: block, schema: MessagesToolUse }]
          : [],
      ),
    startCarriesAnswer: false,
  },
  usage: { stream: () => new MessagesStreamUsage(), answer: messagesAnswerUsage },
  errorMessage: messagesErrorMessage,
  failureEvents: (_stream, message) => [
    sseJson("error", { type: "error", error: { type: "api_error", message } }),
  ],
  finishReasons: (json) => (typeof json.stop_reason === "string" ? [json.stop_reason] : []),
  forwarding: {
    rules: [serviceTier(["auto", "standard_only"])],
    classifyTool(type) {
      if (type.startsWith("web_search_")) return "web_search";
      if (type.startsWith("web_fetch_")) return "web_fetch";
      if (type.startsWith("code_execution_")) return CONTAINER;
      return undefined;
    },
  },
  bound: { formula: "anthropic", walk: messagesBound },
  sim: {
    render(body, headers) {
      const req = decodeMessagesRequest(body, headers.get("anthropic-beta"));
      return {
        view: viewOfMessages(req),
        json: (plan) => messageObject(req, plan),
        events: (plan) => messagesEvents(req, plan),
      };
    },
  },
};
