// The token thread's body (a Worker started by token-thread.ts): counts the texts of each message
// it is sent, one after another, with its own copy of the vocabulary, and answers each message
// with their counts in order.
import { idleCollector, lowerThreadPriority } from "../base/thread.ts";
import type { CountReply, CountRequest } from "./token-thread.ts";
import { countTokensUpTo } from "./tokenizer.ts";

declare const self: Worker;

/** How much nicer than the process the token thread runs on Linux (the event loop keeps the process's). */
const TOKEN_THREAD_NICER = 10;

// Below the event loop's priority: when the cores are busy, requests being answered get the CPU
// before long prompts being counted (hostile ones among them), which wait.
lowerThreadPriority(TOKEN_THREAD_NICER);

// A burst of long prompts' texts would stay in this thread's heap for good (base/thread.ts).
const heap = idleCollector(1000);

self.addEventListener("message", (event: MessageEvent<CountRequest>) => {
  heap.busy();
  const { id, texts, atMost } = event.data;
  let reply: CountReply;
  try {
    const limit = atMost ?? Number.POSITIVE_INFINITY;
    reply = { id, counts: texts.map((text) => countTokensUpTo(text, limit)) };
  } catch (error) {
    reply = { id, error: error instanceof Error ? error.message : String(error) };
  }
  self.postMessage(reply);
  heap.done();
});
