// Counting a prompt without holding the event loop: a short text is counted in place (well under
// a millisecond), a longer one by the token thread, a Worker with its own copy of the vocabulary
// (token-worker.ts), so one request with a megabyte of prompt never stalls the others (`/healthz`
// included) while it is counted. The thread starts at the first long prompt; idle, it never holds
// a process open; if it dies, what it was counting fails and the next long prompt starts another.
import { RequestThread } from "../base/thread.ts";
import { countTokens } from "./tokenizer.ts";

/**
 * Texts up to this many UTF-16 units are counted on the calling thread. The worst text of this
 * length (one unbroken run, the merge's most steps a byte) takes ~3 ms; ordinary text ~0.5 ms.
 */
export const INLINE_COUNT_CHARS = 8 * 1024;

/** What the token thread is sent and answers. */
export interface CountRequest {
  id: number;
  text: string;
}
export type CountReply = { id: number; count: number } | { id: number; error: string };

/** The argument that tells the compiled executable it was started as the token thread (src/main.ts). */
export const TOKEN_THREAD_ROLE = "--token-thread";

const thread = new RequestThread<CountRequest, CountReply>(
  new URL("./token-worker.ts", import.meta.url),
  TOKEN_THREAD_ROLE,
  "token thread",
);

// The last long text counted and its count: the in-process simulator counts the prompt the
// gateway has just counted (the same text, rebuilt from the forwarded body). Texts up to 1 MiB
// only, so a hostile prompt is not kept after its request.
const REMEMBERED_CHARS = 1024 * 1024;
let remembered: { text: string; count: number } | undefined;

/** The number of tokens in `text`, counted off the event loop when it is long. */
export function countPromptTokens(text: string): Promise<number> {
  if (text.length <= INLINE_COUNT_CHARS) return Promise.resolve(countTokens(text));
  if (remembered?.text === text) return Promise.resolve(remembered.count);
  return new Promise<number>((resolve, reject) => {
    const id = thread.open({
      reply(reply) {
        thread.close(id);
        if ("error" in reply) {
          reject(new Error(`the token thread failed: ${reply.error}`));
          return;
        }
        if (text.length <= REMEMBERED_CHARS) remembered = { text, count: reply.count };
        resolve(reply.count);
      },
      stopped: reject,
    });
    thread.post({ id, text });
  });
}
