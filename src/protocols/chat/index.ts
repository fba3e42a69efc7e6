// OpenAI Chat Completions (`POST /v1/chat/completions`): spoken by channel kind "openai-chat" and
// every OpenAI-compatible server, and by the simulator. Its record: see ../adapter.ts.
import { isObject } from "../../base/plain-object.ts";
import { decodeChatRequest } from "../../wire/chat.ts";
import { sseJson } from "../../wire/sse.ts";
import { ChatReader, ChatWriter, readChatReply } from "../../wire/translate/chat-reply.ts";
import { readChatRequest, viewOfChat, writeChatRequest } from "../../wire/translate/chat-request.ts";
import { arr, obj } from "../../wire/translate/narrow.ts";
import { ChatToolCall } from "../../wire/translate/reply-check.ts";
import type { TextAdapter } from "../adapter.ts";
import { serviceTier } from "../forwarding.ts";
import { chatBound } from "./bound.ts";
import { chatErrorMessage } from "./errors.ts";
import { chatCompletion, chatEvents } from "./sim.ts";
import { ChatStreamUsage, chatAnswerUsage } from "./usage.ts";

export const chat: TextAdapter<"chat"> = {
  name: "chat",
  path: "/v1/chat/completions",
  provider: "openai",
  errorShape: "openai",
  outputCapField: "max_tokens",
  inputField: "messages",
  decode(json) {
    const request = decodeChatRequest(json);
    const view = viewOfChat(request);
    // The gateway always asks a streaming upstream for usage (billing needs it); the relay drops
    // that chunk again when the client did not ask for it.
    const overrides =
      view.stream && !view.includeUsage
        ? { stream_options: { ...request.stream_options, include_usage: true } }
        : undefined;
    return {
      view,
      body: request,
      choices: request.n ?? 1,
      ir: () => readChatRequest(request),
      ...(overrides ? { overrides } : {}),
    };
  },
  translate: {
    writeRequest: writeChatRequest,
    readReply: readChatReply,
    reader: () => new ChatReader(),
    writer: (model, _inputEstimate, _request, usageChunk) => new ChatWriter(model, usageChunk),
    toolCalls: (json) =>
      arr(json.choices).flatMap((choice, c) =>
        arr(obj(obj(choice).message).tool_calls).map((item, i) => ({
          path: `choices[${c}].message.tool_calls[${i}]`,
          item,
          schema: ChatToolCall,
        })),
      ),
    startCarriesAnswer: false,
  },
  usage: { stream: () => new ChatStreamUsage(), answer: chatAnswerUsage },
  errorMessage: chatErrorMessage,
  // A `data: {"error":…}` line, as OpenAI ends a stream that failed.
  failureEvents: (_stream, message) => [
    sseJson(undefined, { error: { message, type: "server_error", param: null, code: "upstream_failed" } }),
  ],
  finishReasons: (json) =>
    arr(json.choices).flatMap((c) =>
      isObject(c) && typeof c.finish_reason === "string" ? [c.finish_reason] : [],
    ),
  forwarding: {
    rules: [
      serviceTier(["auto", "default"]),
      {
        field: "modalities",
        refuse: (value) =>
          Array.isArray(value) && value.includes("audio")
            ? 'modalities "audio" produces audio tokens, which this gateway does not price; ask for ["text"]'
            : undefined,
      },
      {
        field: "audio",
        refuse: (value) =>
          value === null
            ? undefined
            : "audio output is not priced by this gateway; leave out the audio field",
      },
    ],
    // Chat tools are functions and custom tools, billed in tokens.
    classifyTool: () => undefined,
  },
  bound: { formula: "openai", walk: chatBound },
  sim: {
    render(body, _headers, now) {
      const req = decodeChatRequest(body);
      return {
        view: viewOfChat(req),
        json: (plan) => chatCompletion(req, plan, now),
        events: (plan) => chatEvents(req, plan, now),
      };
    },
  },
};
