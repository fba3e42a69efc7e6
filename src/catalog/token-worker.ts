// The token thread's body (a Worker started by token-thread.ts): counts the texts of each message
// it is sent, one after another, with its own copy of the vocabulary, and answers each message
// with their counts in order.
import { lowerThreadPriority } from "../base/thread.ts";
import type { CountReply, CountRequest } from "./token-thread.ts";
import { countTokensUpTo } from "./tokenizer.ts";

declare const self: Worker;

/** How much nicer than the process the token thread runs on Linux (the event loop keeps the process's). */
const TOKEN_THREAD_NICER = 10;

// Below the event loop's priority: when the cores are busy, requests being answered get the CPU
// before long prompts being counted (hostile ones among them), which wait.
lowerThreadPriority(TOKEN_THREAD_NICER);

// The texts a count was sent stay in this thread's heap until its next collection, which a thread
// with nothing more to count never reaches: after a burst of long prompts their garbage stayed
// resident for good (the hostile soak: RSS 20 % above its start a minute later). Once the thread
// has been idle this long, its heap is collected.
const IDLE_COLLECT_MS = 1000;
let idle: ReturnType<typeof setTimeout> | undefined;

self.addEventListener("message", (event: MessageEvent<CountRequest>) => {
  clearTimeout(idle);
  const { id, texts, atMost } = event.data;
  let reply: CountReply;
  try {
    const limit = atMost ?? Number.POSITIVE_INFINITY;
    reply = { id, counts: texts.map((text) => countTokensUpTo(text, limit)) };
  } catch (error) {
    reply = { id, error: error instanceof Error ? error.message : String(error) };
  }
  self.postMessage(reply);
  idle = setTimeout(() => Bun.gc(true), IDLE_COLLECT_MS);
  idle.unref();
});
