// Reading an upstream's usage, by the protocol its channel speaks: each reader lives in the folder
// of the kind that speaks that protocol (openai-responses/, openai-chat/, anthropic/; the simulator
// speaks all three and is read like them). Both switches are exhaustive over the protocols, so a
// new one must decide here. The meter takes the counts in one convention (src/wire/text-usage.ts).
import type { UsageCounts } from "../billing/meter.ts";
import type { TextProtocol } from "../wire/text-form.ts";
import { asObject } from "../wire/translate/convert.ts";
import { MessagesStreamUsage, messagesAnswerUsage } from "./anthropic/usage.ts";
import { ChatStreamUsage, chatAnswerUsage } from "./openai-chat/usage.ts";
import { ResponsesStreamUsage, responsesAnswerUsage } from "./openai-responses/usage.ts";
import type { StreamUsage } from "./usage-reader.ts";

export function streamUsage(protocol: TextProtocol): StreamUsage {
  switch (protocol) {
    case "responses":
      return new ResponsesStreamUsage();
    case "chat":
      return new ChatStreamUsage();
    case "messages":
      return new MessagesStreamUsage();
    default: {
      const never: never = protocol;
      throw new Error(`unknown protocol ${String(never)}`);
    }
  }
}

/** The usage inside a complete (non-stream) answer. */
export function answerUsage(protocol: TextProtocol, body: unknown): UsageCounts | undefined {
  const answer = asObject(body);
  if (!answer.ok) return undefined;
  switch (protocol) {
    case "responses":
      return responsesAnswerUsage(answer.value);
    case "chat":
      return chatAnswerUsage(answer.value);
    case "messages":
      return messagesAnswerUsage(answer.value);
    default: {
      const never: never = protocol;
      throw new Error(`unknown protocol ${String(never)}`);
    }
  }
}
