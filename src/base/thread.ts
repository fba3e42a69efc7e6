// Where a Worker's script is: its module file when running from source; in the compiled
// executable (whose sources are not on disk, and which embeds a Worker only when it is an entry
// point of the build) the executable's own entry, src/main.ts, which runs the thread's module when
// started with the thread's role as its argument.
import { existsSync } from "node:fs";
import os from "node:os";
import { fileURLToPath } from "node:url";

/** A Worker's script and arguments: `source` itself, or the executable started in `role`. */
export function threadScript(source: URL, role: string): { script: string; argv: string[] } {
  const onDisk = source.protocol === "file:" && existsSync(fileURLToPath(source));
  return onDisk ? { script: source.href, argv: [] } : { script: Bun.main, argv: [role] };
}

/**
 * Runs the calling thread `nicer` steps below the process's priority, on Linux only, where a nice
 * value belongs to the thread that sets it (elsewhere it would slow the whole process). When the
 * cores are busy the event loop then gets the CPU first. Not permitted (a sandbox): unchanged.
 */
export function lowerThreadPriority(nicer: number): void {
  if (process.platform !== "linux") return;
  try {
    os.setPriority(Math.min(19, os.getPriority() + nicer));
  } catch {
    // The thread runs at the process's priority.
  }
}

/**
 * Collects the calling thread's heap once it has been idle `ms` after its last `busy()`/`done()`.
 * What a worker was sent (a long prompt's text, an uploaded image) stays in its heap until the
 * next collection, which a thread with nothing more to do never reaches: after a burst, that
 * garbage stayed resident for good (the hostile soak: RSS 20 % above its start a minute later).
 */
export function idleCollector(ms: number): { busy(): void; done(): void } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return {
    busy() {
      clearTimeout(timer);
    },
    done() {
      clearTimeout(timer);
      timer = setTimeout(() => Bun.gc(true), ms);
      timer.unref();
    },
  };
}

/** What a request sent to a thread hears back: its replies, or that the thread stopped. */
export interface ThreadListener<Reply> {
  reply(reply: Reply): void;
  stopped(error: Error): void;
}

/**
 * A Worker that answers requests by id, started at the first request and started again after it
 * dies. Idle (no request open) it does not keep the process alive; while a request is open it
 * does, or a process with nothing else to do would exit before the answer. When it dies, every
 * open request hears so.
 */
export class RequestThread<Request extends { id: number }, Reply extends { id: number }> {
  #worker: Worker | undefined;
  readonly #open = new Map<number, ThreadListener<Reply>>();
  #lastId = 0;

  /** `source` is the thread's module, `role` its argument to the executable, `name` how errors call it. */
  constructor(
    private readonly source: URL,
    private readonly role: string,
    private readonly name: string,
  ) {}

  /** Opens a request: its id, whose replies go to `listener` until `close(id)`. */
  open(listener: ThreadListener<Reply>): number {
    const worker = this.#started();
    const id = ++this.#lastId;
    if (this.#open.size === 0) worker.ref();
    this.#open.set(id, listener);
    return id;
  }

  post(message: Request): void {
    this.#started().postMessage(message);
  }

  close(id: number): void {
    if (!this.#open.delete(id)) return;
    if (this.#open.size === 0) this.#worker?.unref();
  }

  #started(): Worker {
    if (this.#worker) return this.#worker;
    const { script, argv } = threadScript(this.source, this.role);
    const worker = new Worker(script, { smol: true, argv });
    worker.unref();
    worker.addEventListener("message", (event: MessageEvent<Reply>) =>
      this.#open.get(event.data.id)?.reply(event.data),
    );
    worker.addEventListener("error", (event: ErrorEvent) => this.#stopped(worker, event.message));
    worker.addEventListener("close", () => this.#stopped(worker, "exited"));
    this.#worker = worker;
    return worker;
  }

  #stopped(worker: Worker, why: string): void {
    if (this.#worker !== worker) return;
    worker.terminate(); // one that failed may still be running: it must not linger beside the next
    this.#worker = undefined;
    const error = new Error(`the ${this.name} stopped: ${why}`);
    const open = [...this.#open.values()];
    this.#open.clear();
    for (const listener of open) listener.stopped(error);
  }
}
