// A worker's end of the channel to its primary: calls paired with their replies by id, messages
// that need no reply, usage events pushed by the primary, and the end of the channel (the primary
// is gone: every pending call fails).
import type { UsageEvent } from "../billing/feed.ts";
import { asToWorker, type Call, type Reply, type ToPrimary, unbatch } from "./protocol.ts";

interface Pending {
  resolve: (reply: Reply) => void;
  reject: (error: Error) => void;
}

export class PrimaryLink {
  readonly #send: (message: ToPrimary) => void;
  readonly #pending = new Map<number, Pending>();
  #next = 0;
  #lost: Error | undefined;
  #idle: (() => void) | undefined;
  /** Usage events the primary pushes while this worker asked for them. */
  onEvent: ((event: UsageEvent) => void) | undefined;

  constructor(send: (message: ToPrimary) => void) {
    this.#send = send;
  }

  /** Sends a call and resolves with its reply; a `failed` reply rejects with the primary's message. */
  call(make: (id: number) => Call): Promise<Reply> {
    if (this.#lost) return Promise.reject(this.#lost);
    const id = ++this.#next;
    return new Promise<Reply>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#send(make(id));
    });
  }

  /** Sends a message that has no reply; dropped once the primary is gone. */
  post(message: ToPrimary): void {
    if (!this.#lost) this.#send(message);
  }

  /** Handles a batch of messages from the primary. */
  receive(raw: unknown): void {
    for (const one of unbatch(raw)) this.#receive(one);
  }

  #receive(raw: unknown): void {
    const message = asToWorker(raw);
    if (message === undefined) return;
    if (message.t === "event") {
      this.onEvent?.(message.event);
      return;
    }
    const pending = this.#pending.get(message.id);
    if (pending === undefined) return;
    this.#pending.delete(message.id);
    if (message.t === "failed") pending.reject(new Error(`cluster primary: ${message.message}`));
    else pending.resolve(message);
    if (this.#pending.size === 0) this.#idle?.();
  }

  /** The channel closed: fails every pending call and every later one. */
  lost(): void {
    this.#lost = new Error("the cluster primary is gone");
    for (const pending of this.#pending.values()) pending.reject(this.#lost);
    this.#pending.clear();
    this.#idle?.();
  }

  /** Resolves when no call waits for a reply (or after `timeoutMs`). */
  async idle(timeoutMs: number): Promise<void> {
    if (this.#pending.size === 0) return;
    const drained = new Promise<void>((resolve) => {
      this.#idle = resolve;
    });
    await Promise.race([drained, Bun.sleep(timeoutMs)]);
    this.#idle = undefined;
  }

  get pending(): number {
    return this.#pending.size;
  }
}
