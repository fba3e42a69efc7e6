// The store thread, main side: usage batches (and keys' last-used times) are written by a Bun
// Worker that owns a store connection of its own (store-worker.ts), so neither SQLite's
// transactions, nor their waits on a lock held by another process, nor PostgreSQL's encoding run
// on the event loop that serves requests. Journalled batches travel as the journal's
// own text (a string crosses threads for ~0.1 µs; the records as objects cost ~150 µs a batch of
// 128 to clone, measured). A commit resolves when the worker's transaction committed, so whoever
// awaits it (the writer, a flush before an admin read) then reads what it wrote. A worker that
// dies fails its commits (the writer keeps them logged and retries, each batch under its name, so
// one the worker committed before dying is not stored twice) and is started again by the next
// commit. A serving process starts it at its first commit: a thread costs ~6 MB resident (a Bun
// Worker's own VM, smol or not, measured), which a server that has served nothing does not hold;
// the meter commits on its own thread until the store thread is ready (ledger.ts), so the
// first records are not held back by the thread's start.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { log } from "../base/log.ts";
import type { KeyId } from "../base/types.ts";
import type { UsageRecord } from "../store/usage/record.ts";
import { timeline } from "../telemetry/timeline.ts";
import type { LogRange } from "./writer.ts";

/** What the main side asks of the worker. */
export type ThreadRequest =
  | { id: number; kind: "open"; url: string; journal: string | undefined }
  | {
      id: number;
      kind: "commit";
      upTo: number | undefined;
      range: LogRange | undefined;
      records: string | undefined;
      batchId: string | undefined;
    }
  | { id: number; kind: "touch"; lastUsed: [KeyId, number][] }
  | { id: number; kind: "close" };

/** The worker's answer to one request. */
export type ThreadReply = { id: number; error?: string };

interface Waiting {
  resolve: () => void;
  reject: (error: Error) => void;
}

export class StoreThread {
  readonly #url: string;
  readonly #journal: string | undefined;
  #worker: Worker | undefined;
  #opened: Promise<void> | undefined;
  #ready = false;
  readonly #waiting = new Map<number, Waiting>();
  #next = 0;

  private constructor(url: string, journal: string | undefined) {
    this.#url = url;
    this.#journal = journal;
  }

  /** Starts the thread and opens its store; throws when it cannot. */
  static async open(url: string, journal?: string): Promise<StoreThread> {
    const thread = new StoreThread(url, journal);
    await thread.#start();
    return thread;
  }

  /** The thread for the store at `url`, started by its first commit or touch, or by start(). */
  static later(url: string, journal?: string): StoreThread {
    return new StoreThread(url, journal);
  }

  /** Whether the thread runs with its store open: a commit sent now waits for no start. */
  get ready(): boolean {
    return this.#ready;
  }

  /** Starts the thread in the background if it is not running (a failure is logged, see #stopped). */
  start(): void {
    this.#start().catch(() => undefined);
  }

  /**
   * Commits the records (store.usage.commit) on the thread; `range` is where their journal lines
   * lie, sent instead of the records when present (the thread reads the lines from the file: the
   * event loop sends a few numbers, not a batch's text). `batchId` names the batch for its retries:
   * one sent after this thread died (here, restarted, or on the main thread) is not stored twice.
   */
  async commit(
    records: readonly UsageRecord[],
    upTo?: number,
    range?: LogRange,
    batchId?: string,
  ): Promise<void> {
    await this.#start();
    await this.#ask({
      kind: "commit",
      upTo,
      range,
      records: range === undefined ? JSON.stringify(records) : undefined,
      batchId,
    });
  }

  /** Writes keys' last-used times (store.touchKeys) on the thread. */
  async touchKeys(lastUsed: ReadonlyMap<KeyId, number>): Promise<void> {
    await this.#start();
    await this.#ask({ kind: "touch", lastUsed: [...lastUsed] });
  }

  /** Closes the thread's store and stops it (after the commit in flight, if any). */
  async close(): Promise<void> {
    if (!this.#worker) return;
    const worker = this.#worker;
    await this.#ask({ kind: "close" }).catch(() => undefined);
    this.#stopped(worker, "closed");
  }

  /** The running worker, started (again) when there is none. */
  #start(): Promise<void> {
    if (this.#worker && this.#opened) return this.#opened;
    const worker = new Worker(workerEntry(), { smol: true });
    // Idle, the thread must not keep a finished process alive (close() ends it in order); while
    // an answer is awaited it must, or a process with nothing else to do would exit before it.
    worker.unref();
    this.#worker = worker;
    worker.addEventListener("message", (event: MessageEvent<ThreadReply>) => {
      if (timeline === undefined) return this.#answer(event.data);
      const start = performance.now();
      this.#answer(event.data);
      timeline.span("store_reply", start);
    });
    worker.addEventListener("error", (event: ErrorEvent) => this.#stopped(worker, event.message));
    worker.addEventListener("close", () => this.#stopped(worker, "exited"));
    const opened = this.#ask({ kind: "open", url: this.#url, journal: this.#journal });
    this.#opened = opened.then(
      () => {
        this.#ready = this.#worker === worker;
      },
      (error: unknown) => {
        this.#stopped(worker, error instanceof Error ? error.message : String(error));
        throw error;
      },
    );
    return this.#opened;
  }

  #ask(request: DistributiveOmit<ThreadRequest, "id">): Promise<void> {
    const worker = this.#worker;
    if (!worker) return Promise.reject(new Error("the store thread is not running"));
    const id = ++this.#next;
    return new Promise<void>((resolve, reject) => {
      if (this.#waiting.size === 0) worker.ref();
      this.#waiting.set(id, { resolve, reject });
      const start = timeline === undefined ? 0 : performance.now();
      worker.postMessage({ ...request, id });
      if (timeline !== undefined) timeline.span("store_post", start, request.kind);
    });
  }

  #answer(reply: ThreadReply): void {
    const waiting = this.#waiting.get(reply.id);
    if (!waiting) return;
    this.#waiting.delete(reply.id);
    if (this.#waiting.size === 0) this.#worker?.unref();
    if (reply.error === undefined) waiting.resolve();
    else waiting.reject(new Error(reply.error));
  }

  /** The worker is done with: what it was asked fails (logged items stay logged), the next commit starts another. */
  #stopped(worker: Worker, why: string): void {
    if (this.#worker !== worker) return;
    worker.terminate(); // one that failed may still be running: it must not linger beside the next
    this.#worker = undefined;
    this.#opened = undefined;
    this.#ready = false;
    if (why !== "closed") log("error", "usage store thread stopped; it restarts at the next commit", { why });
    const error = new Error(`the usage store thread stopped: ${why}`);
    for (const waiting of this.#waiting.values()) waiting.reject(error);
    this.#waiting.clear();
  }
}

/**
 * The store thread for the store at `url`, not yet started (the process has just opened the same
 * store, so the thread's own open is left to its first commit); undefined for an in-memory SQLite
 * store, which no other connection can see (its commits stay on the main thread).
 */
export function openStoreThread(url: string, journal?: string): StoreThread | undefined {
  if (url === "sqlite://:memory:") return undefined;
  return StoreThread.later(url, journal);
}

/**
 * The worker's script. From source, store-worker.ts; in the compiled executable the sources are
 * not on disk and Bun embeds a Worker only when it is an entry point of the build, so the
 * executable's own entry (src/main.ts) is started and runs store-worker.ts off the main thread.
 */
function workerEntry(): string {
  const source = new URL("./store-worker.ts", import.meta.url);
  return source.protocol === "file:" && existsSync(fileURLToPath(source)) ? source.href : Bun.main;
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
