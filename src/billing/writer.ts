// The group-commit writer: each write resolves only when the transaction holding it is durable.
// Classic group commit by default: an idle writer commits at once (after the current turn of the
// event loop, so writes made in the same turn share the transaction), and whatever queues while a
// commit runs forms the next batch — batches grow with traffic instead of commits multiplying, and
// a lone request never waits for company. A window (`windowMs` > 0) instead holds the first item
// of a batch that long. One loop runs at a time; `exclusive` work (reloading balances) runs between
// batches, never during one. No timer or promise per item beyond the caller's own.
import { log } from "../log.ts";

export interface WriterOptions {
  /** How long the first item of a batch waits for company, in ms; 0 (default) = classic group commit. */
  windowMs?: number;
  /** A batch this large commits at once. */
  maxBatch?: number;
  /** Attempts per batch before its writers are told it failed. */
  attempts?: number;
  /** Pause between attempts, in ms (multiplied by the attempt number). */
  retryMs?: number;
}

interface Pending<T> {
  item: T;
  resolve: () => void;
  reject: (error: unknown) => void;
}

export class GroupCommitWriter<T> {
  readonly #commit: (batch: T[]) => Promise<unknown>;
  readonly #windowMs: number;
  readonly #maxBatch: number;
  readonly #attempts: number;
  readonly #retryMs: number;
  #queue: Pending<T>[] = [];
  #exclusive: (() => Promise<void>)[] = [];
  #timer: ReturnType<typeof setTimeout> | undefined;
  #soon: ReturnType<typeof setImmediate> | undefined;
  #running: Promise<void> | undefined;
  #closed = false;

  constructor(commit: (batch: T[]) => Promise<unknown>, options: WriterOptions = {}) {
    this.#commit = commit;
    this.#windowMs = options.windowMs ?? 0;
    this.#maxBatch = options.maxBatch ?? 512;
    this.#attempts = options.attempts ?? 20;
    this.#retryMs = options.retryMs ?? 50;
  }

  /** Queues an item; resolves once the transaction holding it has committed. */
  write(item: T): Promise<void> {
    if (this.#closed) return Promise.reject(new Error("the usage writer is closed"));
    return new Promise<void>((resolve, reject) => {
      this.#queue.push({ item, resolve, reject });
      this.#kick(this.#queue.length >= this.#maxBatch ? 0 : this.#windowMs);
    });
  }

  /** Items queued and not yet handed to a commit. */
  queued(): readonly T[] {
    return this.#queue.map((p) => p.item);
  }

  /** Runs `fn` between batches: no commit happens while it runs. */
  exclusive(fn: () => Promise<void>): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#exclusive.push(() => fn().then(resolve, reject));
      this.#kick(0);
    });
  }

  /** Commits everything queued, then refuses new writes. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#clearPending();
    if (!this.#running) this.#start();
    while (this.#running) await this.#running;
  }

  #kick(delayMs: number): void {
    if (this.#running) return; // the running loop picks up whatever is queued
    if (delayMs <= 0) {
      if (this.#timer) clearTimeout(this.#timer);
      this.#timer = undefined;
      // After this turn of the event loop: settlements finishing in the same turn share a commit.
      this.#soon ??= setImmediate(() => {
        this.#soon = undefined;
        if (!this.#running) this.#start();
      });
      return;
    }
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined;
      if (!this.#running) this.#start();
    }, delayMs);
  }

  #clearPending(): void {
    if (this.#timer) clearTimeout(this.#timer);
    if (this.#soon) clearImmediate(this.#soon);
    this.#timer = undefined;
    this.#soon = undefined;
  }

  #start(): void {
    this.#clearPending();
    const run = this.#loop();
    this.#running = run;
    // Cleared here, not inside the loop: an empty loop finishes before `#running` is even assigned.
    void run.finally(() => {
      if (this.#running !== run) return;
      this.#running = undefined;
      // Work queued between the loop's last check and now would otherwise wait for the next write.
      if (this.#exclusive.length > 0 || this.#queue.length > 0) this.#start();
    });
  }

  async #loop(): Promise<void> {
    while (this.#queue.length > 0 || this.#exclusive.length > 0) {
      const work = this.#exclusive;
      this.#exclusive = [];
      for (const fn of work) await fn().catch(() => undefined);
      if (this.#queue.length === 0) continue;
      const batch = this.#queue.splice(0, this.#maxBatch);
      await this.#commitBatch(batch);
    }
  }

  async #commitBatch(batch: Pending<T>[]): Promise<void> {
    const items = batch.map((p) => p.item);
    for (let attempt = 1; ; attempt++) {
      try {
        await this.#commit(items);
        for (const p of batch) p.resolve();
        return;
      } catch (error) {
        log(attempt < this.#attempts ? "warn" : "error", "usage batch commit failed", {
          attempt,
          records: items.length,
          error: error instanceof Error ? error.message : String(error),
        });
        if (attempt >= this.#attempts) {
          for (const p of batch) p.reject(error);
          return;
        }
        await Bun.sleep(this.#retryMs * attempt);
      }
    }
  }
}
