// Counting prompts without holding the event loop: short texts are counted in place (well under
// a millisecond), longer ones by the token thread, a Worker with its own copy of the vocabulary
// (token-worker.ts), so one request with a megabyte of prompt, or 2,048 embedding inputs of 8,192
// tokens, never stalls the others (`/healthz` included) while it is counted. Long counts wait
// their key's turn there. The thread starts at the first long count; idle, it never holds a
// process open; if it dies, what it was counting fails and the next long count starts another.
import { RequestThread } from "../base/thread.ts";
import { countTokensUpTo } from "./tokenizer.ts";

/**
 * Texts up to this many UTF-16 units in all are counted on the calling thread. The worst text of
 * this length (one unbroken run, the merge's most steps a byte) takes ~3 ms; ordinary text ~0.5 ms.
 */
export const INLINE_COUNT_CHARS = 8 * 1024;

/** What the token thread is sent (texts counted one after another) and answers (a count each). */
export interface CountRequest {
  id: number;
  texts: readonly string[];
  /** Counting a text stops once it passes this (countTokensUpTo's `atMost`). */
  atMost?: number | undefined;
}
export type CountReply = { id: number; counts: number[] } | { id: number; error: string };

/** The argument that tells the compiled executable it was started as the token thread (src/main.ts). */
export const TOKEN_THREAD_ROLE = "--token-thread";

const thread = new RequestThread<CountRequest, CountReply>(
  new URL("./token-worker.ts", import.meta.url),
  TOKEN_THREAD_ROLE,
  "token thread",
);

// The last long texts counted and their counts: the in-process simulator counts the prompt (or
// the embedding inputs) the gateway has just counted (the same texts, rebuilt from the forwarded
// body). Texts up to 1 MiB in all only, so a hostile prompt is not kept after its request.
const REMEMBERED_CHARS = 1024 * 1024;
let remembered: { texts: readonly string[]; counts: number[] } | undefined;

const charsOf = (texts: readonly string[]): number => texts.reduce((sum, text) => sum + text.length, 0);

function rememberedCounts(texts: readonly string[]): number[] | undefined {
  if (remembered === undefined || remembered.texts.length !== texts.length) return undefined;
  const { texts: known, counts } = remembered;
  return texts.every((text, i) => text === known[i]) ? counts : undefined;
}

/** A count waiting for the token thread, for one owner (an API key; "" for none). */
interface Job {
  owner: string;
  texts: readonly string[];
  atMost: number | undefined;
  resolve(counts: number[]): void;
  reject(error: Error): void;
}

// Counts waiting for the thread, a queue per owner, served in turn: the owner first in line gets
// one count and goes to the back if it has more, so one key's stream of long prompts (a hostile
// one's) holds another key's count behind one of its own, not behind all of them. One count is
// in the thread at a time (a message's round trip is ~0.1 ms; a long count, milliseconds).
const waiting = new Map<string, Job[]>();
let busy = false;

function enqueue(job: Job): void {
  const queue = waiting.get(job.owner);
  if (queue === undefined) waiting.set(job.owner, [job]);
  else queue.push(job);
  if (!busy) dispatch();
}

/** Sends the next owner's next count to the thread (a Map iterates in insertion order: the turn). */
function dispatch(): void {
  for (;;) {
    const next = waiting.entries().next();
    if (next.done) {
      busy = false;
      return;
    }
    const [owner, queue] = next.value;
    const job = queue.shift() as Job;
    waiting.delete(owner);
    if (queue.length > 0) waiting.set(owner, queue);
    busy = true;
    let id: number | undefined;
    try {
      const opened = thread.open({
        reply(reply) {
          thread.close(opened);
          if ("error" in reply) job.reject(new Error(`the token thread failed: ${reply.error}`));
          else job.resolve(reply.counts);
          dispatch();
        },
        stopped(error) {
          job.reject(error);
          dispatch();
        },
      });
      id = opened;
      thread.post({ id, texts: job.texts, atMost: job.atMost });
      return;
    } catch (error) {
      // The thread could not be started or reached: this count fails and the next one is tried,
      // so the queue never waits on a count that was never sent.
      if (id !== undefined) thread.close(id);
      job.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }
}

/**
 * The number of tokens in each of `texts`, in order: counted in place when they are short in all,
 * else by the token thread (one message for the lot, so the count of each is still known), in
 * `owner`'s turn.
 */
export function countEachTokens(texts: readonly string[], atMost?: number, owner = ""): Promise<number[]> {
  const chars = charsOf(texts);
  const limit = atMost ?? Number.POSITIVE_INFINITY;
  if (chars <= INLINE_COUNT_CHARS) return Promise.resolve(texts.map((text) => countTokensUpTo(text, limit)));
  const known = rememberedCounts(texts);
  if (known) return Promise.resolve(known);
  return new Promise<number[]>((resolve, reject) => {
    enqueue({
      owner,
      texts,
      atMost,
      resolve(counts) {
        // Only exact counts: one stopped at `atMost` is not the text's count.
        const exact = atMost === undefined || counts.every((count) => count <= atMost);
        if (exact && chars <= REMEMBERED_CHARS) remembered = { texts, counts };
        resolve(counts);
      },
      reject,
    });
  });
}

/**
 * The number of tokens in `text`, counted off the event loop when it is long, in `owner`'s turn;
 * with `atMost` (a model's context), some number above it as soon as the count passes it.
 */
export async function countPromptTokens(text: string, atMost?: number, owner = ""): Promise<number> {
  const [count] = await countEachTokens([text], atMost, owner);
  return count ?? 0;
}
