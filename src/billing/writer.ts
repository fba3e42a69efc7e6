// The group-commit writer: each write resolves only when the batch holding it is durable.
// Classic group commit by default: an idle writer commits at once (after the current turn of the
// event loop, so writes made in the same turn share the transaction), and whatever queues while a
// commit runs forms the next batch — batches grow with traffic instead of commits multiplying, and
// a lone request never waits for company. A window (`windowMs` > 0) instead holds the first item
// of a batch that long. One loop runs at a time; `exclusive` work (reloading balances) runs between
// store commits, never during one. No timer or promise per item beyond the caller's own.
//
// With a durable log (src/billing/journal.ts) a batch is durable once appended to the log; the
// logged items then reach the store in larger commits (`storeBatch` at most, after `storeDelayMs`
// or as soon as that many wait). Those commits run in a lane of their own, one at a time: when the
// commit is asynchronous (the store thread, src/billing/store-thread.ts) appends and the answers
// waiting on them go on while it runs, so a commit to the store is on no request's path.
//
// Each batch is named when it is formed and keeps its name through its retries: a commit that
// landed but whose answer never came (the store thread died before replying) is then retried as
// the same batch, which the store recognises and does not store twice — the one guard a batch has
// without a log, whose sequence numbers otherwise tell the store what it holds.
import { log } from "../base/log.ts";

/** Where a run of a log's lines lies: bytes `from` to `to` (exclusive) of the file at `path`. */
export interface LogRange {
  path: string;
  from: number;
  to: number;
}

/** An append-only log that makes items durable before the store has them. */
export interface DurableLog<T> {
  /** Makes the items durable with one write; returns the sequence number given to the last one. */
  append(items: readonly T[]): number;
  /** Where the last append's lines lie, one per item, when the log is a file (the store reads them there). */
  readonly lastRange?: LogRange | undefined;
  /** Everything appended is in the store: the log may start over. */
  clear(): void;
  /**
   * The store has everything but the last `count` items, whose lines start at byte `from`: the log
   * may shrink to them (they then start at 0). Whether it did.
   */
  compact?(count: number, from: number): boolean;
}

/**
 * Commits a batch to the store; when logged, `upTo` is the log sequence number of its last item
 * and `range` where the log's lines of the batch lie (when the log is a file): a store thread
 * reads them there, so the event loop neither joins the batch's text nor copies it to the thread.
 * `batchId` names the batch, the same on every try of it: a try whose commit landed but whose answer was lost (the store
 * thread died before replying) has its retry recognised by the store, which does not store the
 * batch again (src/store/usage/batches.ts).
 */
export type Commit<T> = (
  batch: T[],
  upTo: number | undefined,
  range: LogRange | undefined,
  batchId: string,
) => Promise<unknown>;

export interface WriterOptions<T> {
  /** How long the first item of a batch waits for company, in ms; 0 (default) = classic group commit. */
  windowMs?: number;
  /** A batch this large commits at once. */
  maxBatch?: number;
  /** Attempts per batch before its writers are told it failed. */
  attempts?: number;
  /** Pause between attempts, in ms (multiplied by the attempt number). */
  retryMs?: number;
  /** Where a batch becomes durable first; without one, the commit to the store is the durable step. */
  log?: DurableLog<T> | undefined;
  /** How long logged items wait for company before their commit to the store, in ms. */
  storeDelayMs?: number;
  /**
   * Most logged items per commit to the store; this many waiting commit at once. A function is asked
   * before each commit (the ledger's limit depends on where the commit runs).
   */
  storeBatch?: number | (() => number);
  /** Called after each commit of logged items with the log sequence number of the last one. */
  onStored?: (upTo: number) => void;
}

interface Pending<T> {
  item: T;
  /** With the item's log sequence number when a log made it durable. */
  resolve: (seq: number | undefined) => void;
  reject: (error: unknown) => void;
}

/** A batch as committed: its items, where it ends in the log (when logged), and its name. */
interface Batch<T> {
  items: T[];
  upTo: number | undefined;
  range: LogRange | undefined;
  /** The same on every try of this batch (Commit). */
  id: string;
}

interface Logged<T> {
  items: T[];
  /** The log sequence number of the last item. */
  upTo: number;
  /** Where the log's lines of these items lie, when the log is a file. */
  range: LogRange | undefined;
}

export class GroupCommitWriter<T> {
  readonly #commit: Commit<T>;
  readonly #windowMs: number;
  readonly #maxBatch: number;
  readonly #attempts: number;
  readonly #retryMs: number;
  readonly #log: DurableLog<T> | undefined;
  readonly #storeDelayMs: number;
  readonly #storeBatch: () => number;
  readonly #onStored: ((upTo: number) => void) | undefined;
  #queue: Pending<T>[] = [];
  /** Logged (durable) items not yet in the store, oldest first. */
  #logged: Logged<T>[] = [];
  #loggedCount = 0;
  /** Logged items are due for the store (their delay passed, enough wait, or a flush asked). */
  #storeDue = false;
  /** Flushes waiting: the store lane keeps going until nothing logged is left. */
  #flushes = 0;
  /** Failed store commits in a row (the pause before the next one grows with them). */
  #storeFailures = 0;
  #storeTimer: ReturnType<typeof setTimeout> | undefined;
  /** The store lane: commits of logged items, one at a time, beside the loop that appends. */
  #storing: Promise<void> | undefined;
  /** Exclusive work or a direct commit holds the store: the lane starts no commit meanwhile. */
  #holding = false;
  #exclusive: (() => Promise<void>)[] = [];
  #timer: ReturnType<typeof setTimeout> | undefined;
  #soon: ReturnType<typeof setImmediate> | undefined;
  #running: Promise<void> | undefined;
  #closed = false;

  constructor(commit: Commit<T>, options: WriterOptions<T> = {}) {
    this.#commit = commit;
    this.#windowMs = options.windowMs ?? 0;
    this.#maxBatch = options.maxBatch ?? 512;
    this.#attempts = options.attempts ?? 20;
    this.#retryMs = options.retryMs ?? 50;
    this.#log = options.log;
    this.#storeDelayMs = options.storeDelayMs ?? 20;
    const storeBatch = options.storeBatch ?? 256;
    this.#storeBatch = typeof storeBatch === "number" ? () => storeBatch : storeBatch;
    this.#onStored = options.onStored;
  }

  /**
   * Queues an item; resolves once it is durable (appended to the log, or committed to the store
   * without one), with its log sequence number when logged.
   */
  write(item: T): Promise<number | undefined> {
    if (this.#closed) return Promise.reject(new Error("the usage writer is closed"));
    return new Promise<number | undefined>((resolve, reject) => {
      this.#queue.push({ item, resolve, reject });
      this.#kick(this.#queue.length >= this.#maxBatch ? 0 : this.#windowMs);
    });
  }

  /** How many items are not yet in the store (queued or logged), without copying them. */
  backlog(): number {
    return this.#loggedCount + this.#queue.length;
  }

  /** Items not yet in the store: queued, or logged and waiting for their commit. */
  queued(): readonly T[] {
    return [...this.#logged.flatMap((l) => l.items), ...this.#queue.map((p) => p.item)];
  }

  /** Commits everything written so far to the store (logged items included). */
  async flush(): Promise<void> {
    if (this.#loggedCount === 0 && this.#queue.length === 0 && !this.#running && !this.#storing) return;
    this.#flushes++;
    try {
      this.#storeDue = true;
      this.#kick(0);
      this.#storeLane();
      await this.#idle();
    } finally {
      this.#flushes--;
    }
  }

  /** Runs `fn` between store commits: no commit happens while it runs. */
  exclusive(fn: () => Promise<void>): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#exclusive.push(() => fn().then(resolve, reject));
      this.#kick(0);
    });
  }

  /** Commits everything queued, then refuses new writes. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#storeDue = true;
    this.#clearPending();
    if (!this.#running) this.#start();
    this.#storeLane();
    await this.#idle();
  }

  /** Resolves once no loop, commit or pending start is left. */
  async #idle(): Promise<void> {
    while (this.#running || this.#soon || this.#storing) {
      await (this.#running ?? this.#storing ?? new Promise((r) => setImmediate(r)));
    }
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
    if (this.#storeTimer && this.#storeDue) clearTimeout(this.#storeTimer);
    this.#timer = undefined;
    this.#soon = undefined;
    if (this.#storeDue) this.#storeTimer = undefined;
  }

  /** Makes logged items due for the store after the delay (at once when a full batch waits). */
  #scheduleStore(): void {
    if (this.#loggedCount >= this.#storeBatch()) this.#storeDue = true;
    if (this.#storeDue) this.#storeLane();
    else this.#storeTimer ??= setTimeout(() => this.#retryStore(), this.#storeDelayMs);
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
      if (work.length > 0) {
        await this.#hold(async () => {
          for (const fn of work) await fn().catch(() => undefined);
        });
      }
      if (this.#queue.length > 0) {
        const batch = this.#queue.splice(0, this.#maxBatch);
        // Without a log, or when appending failed (it leaves nothing behind), the store commit is
        // the durable step.
        if (!this.#append(batch)) await this.#hold(() => this.#commitBatch(batch));
      }
    }
  }

  /** Runs `work` once the store commit in flight has landed, with no other starting meanwhile. */
  async #hold(work: () => Promise<void>): Promise<void> {
    this.#holding = true;
    try {
      await this.#storing;
      await work();
    } finally {
      this.#holding = false;
      this.#storeLane();
    }
  }

  /** Appends the batch to the log and resolves its writes; false when there is no log or it failed. */
  #append(batch: Pending<T>[]): boolean {
    if (!this.#log) return false;
    const items = batch.map((p) => p.item);
    let upTo: number;
    try {
      upTo = this.#log.append(items);
    } catch (error) {
      // Durable through the store instead: committed directly, the log is not needed for them.
      log("warn", "usage journal append failed; committing to the store directly", {
        records: items.length,
        error: error instanceof Error ? error.message : String(error),
      });
      return false;
    }
    this.#logged.push({ items, upTo, range: this.#log.lastRange });
    this.#loggedCount += items.length;
    // An append numbers its items consecutively, ending at upTo.
    for (const [i, p] of batch.entries()) p.resolve(upTo - (batch.length - 1 - i));
    this.#scheduleStore();
    return true;
  }

  /** Starts the store lane when logged items are due and nothing holds the store. */
  #storeLane(): void {
    if (this.#storing || this.#holding || !this.#storeWaiting()) return;
    const run = this.#storeLoop();
    this.#storing = run;
    void run.finally(() => {
      if (this.#storing !== run) return;
      this.#storing = undefined;
      this.#storeLane();
    });
  }

  #storeWaiting(): boolean {
    return this.#storeDue && this.#loggedCount > 0;
  }

  async #storeLoop(): Promise<void> {
    while (this.#storeWaiting() && !this.#holding) {
      if (!(await this.#storeLogged())) return;
      // Give requests a turn between commits (a commit on this thread blocks them while it runs).
      if (this.#storeWaiting()) await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /**
   * Commits the oldest logged appends, up to `storeBatch` items; false when the store keeps
   * failing (they stay logged). An append is not split, so a batch's lines are one range of the
   * log, unless it alone is larger than `storeBatch` (never with a store thread, whose batch is
   * the largest append): its parts then go as records.
   */
  async #storeLogged(): Promise<boolean> {
    // They stay in #logged (and in queued()) until the store has them; appends made meanwhile
    // join the end of #logged. A split append's sequence numbers are consecutive, so each part
    // keeps exact numbers.
    const taken: Logged<T>[] = [];
    let count = 0;
    let rest: Logged<T> | undefined;
    const most = this.#storeBatch();
    for (const next of this.#logged) {
      if (count + next.items.length <= most) {
        taken.push(next);
        count += next.items.length;
        continue;
      }
      if (count === 0) {
        const left = next.items.length - most;
        taken.push({ items: next.items.slice(0, most), upTo: next.upTo - left, range: undefined });
        rest = { items: next.items.slice(most), upTo: next.upTo, range: undefined };
      }
      break;
    }
    const items = taken.length === 1 ? (taken[0] as Logged<T>).items : taken.flatMap((l) => l.items);
    const upTo = (taken.at(-1) as Logged<T>).upTo;
    const range = joinedRange(taken);
    // One attempt per turn while serving: the records are durable in the log already, and
    // retrying here would only delay the next batch. Closing tries harder.
    const attempts = this.#closed ? this.#attempts : 1;
    // A batch formed again after a failure may hold more items, so it gets a new name: the log
    // sequence numbers tell the store which of them it has.
    const failed = await this.#commitWithRetries({ items, upTo, range, id: crypto.randomUUID() }, attempts);
    if (failed !== undefined) {
      // Still durable in the log: kept for a later commit, or the replay at the next start.
      this.#storeFailures++;
      this.#storeDue = false;
      const pauseMs = this.#retryMs * Math.min(this.#storeFailures, this.#attempts);
      if (!this.#closed) this.#storeTimer ??= setTimeout(() => this.#retryStore(), pauseMs);
      return false;
    }
    this.#storeFailures = 0;
    this.#onStored?.(upTo);
    if (rest !== undefined) this.#logged[0] = rest;
    else this.#logged.splice(0, taken.length);
    this.#loggedCount -= items.length;
    if (this.#loggedCount === 0) this.#log?.clear();
    else this.#compact();
    // Items logged meanwhile wait for their own delay, unless a full batch, a flush or a close waits.
    this.#storeDue = this.#closed || this.#flushes > 0 || this.#loggedCount >= this.#storeBatch();
    if (!this.#storeDue && this.#loggedCount > 0) {
      this.#storeTimer ??= setTimeout(() => this.#retryStore(), this.#storeDelayMs);
    }
    return true;
  }

  /** Lets the log shrink to the lines still unstored, and moves their ranges to where they then lie. */
  #compact(): void {
    const first = this.#logged[0]?.range;
    if (first === undefined || !this.#log?.compact?.(this.#loggedCount, first.from)) return;
    for (const logged of this.#logged) {
      const { range } = logged;
      if (range !== undefined)
        logged.range = { ...range, from: range.from - first.from, to: range.to - first.from };
    }
  }

  #retryStore(): void {
    this.#storeTimer = undefined;
    this.#storeDue = true;
    this.#storeLane();
  }

  async #commitBatch(batch: Pending<T>[]): Promise<void> {
    const items = batch.map((p) => p.item);
    const failed = await this.#commitWithRetries(
      { items, upTo: undefined, range: undefined, id: crypto.randomUUID() },
      this.#attempts,
    );
    for (const p of batch) {
      if (failed === undefined) p.resolve(undefined);
      else p.reject(failed.error);
    }
  }

  /** Commits, retrying with growing pauses under the batch's one name; the last error when all failed. */
  async #commitWithRetries(batch: Batch<T>, attempts: number): Promise<{ error: unknown } | undefined> {
    const { items, upTo, range, id } = batch;
    for (let attempt = 1; ; attempt++) {
      try {
        await this.#commit(items, upTo, range, id);
        return undefined;
      } catch (error) {
        log(attempt < attempts || upTo !== undefined ? "warn" : "error", "usage commit failed", {
          attempt,
          records: items.length,
          journaled: upTo !== undefined,
          error: error instanceof Error ? error.message : String(error),
        });
        if (attempt >= attempts) return { error };
        await Bun.sleep(this.#retryMs * attempt);
      }
    }
  }
}

/** The range of consecutive appends' lines, when each has one and they follow one another in one file. */
function joinedRange<T>(appends: readonly Logged<T>[]): LogRange | undefined {
  const first = appends[0]?.range;
  if (first === undefined) return undefined;
  let to = first.from;
  for (const { range } of appends) {
    if (range === undefined || range.path !== first.path || range.from !== to) return undefined;
    to = range.to;
  }
  return { path: first.path, from: first.from, to };
}
