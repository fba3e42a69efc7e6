// Reading an upstream's usage, by the protocol its channel speaks: each reader lives in the folder
// of the kind that speaks that protocol (openai-responses/, openai-chat/, anthropic/; the simulator
// speaks all three and is read like them). Both tables are records over the protocols, so a new
// one must fill its row here. The meter takes the counts in one convention (src/wire/text-usage.ts).
import type { UsageCounts } from "../billing/contract.ts";
import type { TextProtocol } from "../wire/text-form.ts";
import { asObject } from "../wire/translate/convert.ts";
import type { Obj } from "../wire/translate/narrow.ts";
import { MessagesStreamUsage, messagesAnswerUsage } from "./anthropic/usage.ts";
import { ChatStreamUsage, chatAnswerUsage } from "./openai-chat/usage.ts";
import { ResponsesStreamUsage, responsesAnswerUsage } from "./openai-responses/usage.ts";
import type { StreamUsage } from "./usage-reader.ts";

const STREAM_READERS: Record<TextProtocol, () => StreamUsage> = {
  responses: () => new ResponsesStreamUsage(),
  chat: () => new ChatStreamUsage(),
  messages: () => new MessagesStreamUsage(),
};

const ANSWER_READERS: Record<TextProtocol, (answer: Obj) => UsageCounts | undefined> = {
  responses: responsesAnswerUsage,
  chat: chatAnswerUsage,
  messages: messagesAnswerUsage,
};

export function streamUsage(protocol: TextProtocol): StreamUsage {
  return STREAM_READERS[protocol]();
}

/** The usage inside a complete (non-stream) answer. */
export function answerUsage(protocol: TextProtocol, body: unknown): UsageCounts | undefined {
  const answer = asObject(body);
  return answer.ok ? ANSWER_READERS[protocol](answer.value) : undefined;
}
