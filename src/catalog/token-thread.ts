// Counting a prompt without holding the event loop: a short text is counted in place (well under
// a millisecond), a longer one by the token thread, a Worker with its own copy of the vocabulary
// (token-worker.ts), so one request with a megabyte of prompt never stalls the others (`/healthz`
// included) while it is counted. The thread starts at the first long prompt and is not kept:
// idle, it never holds a process open; if it dies, what it was counting fails and the next long
// prompt starts another.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
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

interface Waiting {
  resolve(count: number): void;
  reject(error: Error): void;
}

let worker: Worker | undefined;
const waiting = new Map<number, Waiting>();
let lastId = 0;

/** The number of tokens in `text`, counted off the event loop when it is long. */
export function countPromptTokens(text: string): Promise<number> {
  if (text.length <= INLINE_COUNT_CHARS) return Promise.resolve(countTokens(text));
  const thread = started();
  const id = ++lastId;
  return new Promise<number>((resolve, reject) => {
    if (waiting.size === 0) thread.ref();
    waiting.set(id, { resolve, reject });
    thread.postMessage({ id, text } satisfies CountRequest);
  });
}

function started(): Worker {
  if (worker) return worker;
  const thread = new Worker(workerEntry(), { smol: true, argv: [TOKEN_THREAD_ROLE] });
  // Idle, the thread must not keep a finished process alive; while a count is awaited it must.
  thread.unref();
  thread.addEventListener("message", (event: MessageEvent<CountReply>) => answered(event.data));
  thread.addEventListener("error", (event: ErrorEvent) => stopped(thread, event.message));
  thread.addEventListener("close", () => stopped(thread, "exited"));
  worker = thread;
  return thread;
}

function answered(reply: CountReply): void {
  const entry = waiting.get(reply.id);
  if (!entry) return;
  waiting.delete(reply.id);
  if (waiting.size === 0) worker?.unref();
  if ("error" in reply) {
    entry.reject(new Error(`the token thread failed: ${reply.error}`));
    return;
  }
  entry.resolve(reply.count);
}

function stopped(thread: Worker, why: string): void {
  if (worker !== thread) return;
  thread.terminate();
  worker = undefined;
  const error = new Error(`the token thread stopped: ${why}`);
  for (const entry of waiting.values()) entry.reject(error);
  waiting.clear();
}

/**
 * The worker's script: token-worker.ts from source; in the compiled executable (whose sources are
 * not on disk) the executable's own entry, which runs token-worker.ts when started in this role.
 */
function workerEntry(): string {
  const source = new URL("./token-worker.ts", import.meta.url);
  return source.protocol === "file:" && existsSync(fileURLToPath(source)) ? source.href : Bun.main;
}
