// The token thread's body (a Worker started by token-thread.ts): counts the texts of each message
// it is sent, one after another, with its own copy of the vocabulary, and answers each message
// with their counts in order.
import type { CountReply, CountRequest } from "./token-thread.ts";
import { countTokens } from "./tokenizer.ts";

declare const self: Worker;

self.addEventListener("message", (event: MessageEvent<CountRequest>) => {
  const { id, texts } = event.data;
  let reply: CountReply;
  try {
    reply = { id, counts: texts.map(countTokens) };
  } catch (error) {
    reply = { id, error: error instanceof Error ? error.message : String(error) };
  }
  self.postMessage(reply);
});
