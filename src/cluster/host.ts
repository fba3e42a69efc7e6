// The primary's end of one worker's channel: answers the worker's meter calls against the one
// LedgerMeter (RPM, concurrency, balance reservation and daily cap are decided there, atomically,
// for every worker), remembers the tickets the worker holds, and when the worker is gone settles
// them with no charge so their reservations and slots come back. Also relays the worker's
// notifier hooks and, when it asks, the usage feed.

import { log } from "../base/log.ts";
import { type Admission, type Meter, NO_USAGE } from "../billing/contract.ts";
import type { UsageEvent } from "../billing/feed.ts";
import { findModel } from "../catalog/models.ts";
import type { Notifier } from "../notify/notifier.ts";
import { GatewayError } from "../wire/errors.ts";
import {
  asToPrimary,
  type Reply,
  type ToPrimary,
  type ToWorker,
  toWireError,
  unbatch,
  type WireAdmit,
} from "./protocol.ts";

export interface HostBilling {
  /** The one real meter; flush() puts settled records in the store where a meter buffers them. */
  meter: Meter & { flush?(): Promise<void> };
  notifier: Notifier;
}

export class WorkerHost {
  readonly index: number;
  readonly #send: (message: ToWorker) => void;
  readonly #billing: HostBilling;
  readonly #tickets = new Map<number, Admission>();
  #nextTicket = 0;
  #wantsFeed = false;
  #gone = false;
  /** Called once with the worker's URL when it listens. */
  onReady: ((url: string) => void) | undefined;

  constructor(index: number, send: (message: ToWorker) => void, billing: HostBilling) {
    this.index = index;
    this.#send = send;
    this.#billing = billing;
  }

  /** Handles a batch of messages from the worker. */
  receive(raw: unknown): void {
    for (const one of unbatch(raw)) {
      const message = asToPrimary(one);
      if (message === undefined) log("warn", "unknown message from a worker ignored", { worker: this.index });
      else this.#dispatch(message);
    }
  }

  #dispatch(message: ToPrimary): void {
    switch (message.t) {
      case "admit":
        void this.#admit(message.id, message.input);
        return;
      case "settle":
        void this.#settle(message.id, message.ticket, message.result);
        return;
      case "balance":
        void this.#reply(message.id, async () => {
          const view = await this.#billing.meter.balance?.(message.key);
          if (view === undefined) throw new Error("this meter keeps no balance");
          return { t: "balance", id: message.id, view };
        });
        return;
      case "flush":
        void this.#reply(message.id, async () => {
          await this.#billing.meter.flush?.();
          return { t: "done", id: message.id };
        });
        return;
      case "feed":
        this.#wantsFeed = message.on;
        return;
      case "balance-changed":
        this.#billing.notifier.balanceChanged(message.accountId);
        return;
      case "key-refused":
        this.#billing.notifier.keyRefused(message.refusal);
        return;
      case "ready":
        this.onReady?.(message.url);
        return;
      default: {
        const never: never = message;
        throw new Error(`unhandled worker message ${String(never)}`);
      }
    }
  }

  async #admit(id: number, input: WireAdmit): Promise<void> {
    const model = findModel(input.model);
    if (model === undefined) return this.#post({ t: "failed", id, message: `unknown model ${input.model}` });
    try {
      const admission = await this.#billing.meter.admit({ ...input, model });
      const ticket = ++this.#nextTicket;
      this.#tickets.set(ticket, admission);
      // Gone while admitting: the exit handler has already swept the tickets, so this one is ours to release.
      if (this.#gone) return void this.#abandonOne(ticket, "worker gone while admitting");
      this.#post({ t: "admitted", id, ticket, headers: { ...admission.headers } });
    } catch (error) {
      if (error instanceof GatewayError) this.#post({ t: "refused", id, error: toWireError(error) });
      else this.#post({ t: "failed", id, message: error instanceof Error ? error.message : String(error) });
    }
  }

  #settle(id: number, ticket: number, result: Parameters<Admission["settle"]>[0]): Promise<void> {
    return this.#reply(id, async () => {
      const admission = this.#tickets.get(ticket);
      if (admission === undefined) throw new Error(`no ticket ${ticket} is open for worker ${this.index}`);
      this.#tickets.delete(ticket);
      const costNanos = await admission.settle(result);
      return { t: "done", id, costNanos };
    });
  }

  async #reply(id: number, answer: () => Promise<Reply>): Promise<void> {
    try {
      this.#post(await answer());
    } catch (error) {
      this.#post({ t: "failed", id, message: error instanceof Error ? error.message : String(error) });
    }
  }

  #post(message: ToWorker): void {
    // Once gone, the exit handler has released what the worker held; nobody waits for replies.
    if (!this.#gone) this.#send(message);
  }

  /** Pushes a usage event if the worker has admin feed readers. */
  publish(event: UsageEvent): void {
    if (this.#wantsFeed) this.#post({ t: "event", event });
  }

  /** Requests admitted for the worker and not yet settled. */
  get open(): number {
    return this.#tickets.size;
  }

  /**
   * The worker is gone: settles every request it held with no usage (no charge, source `none`),
   * which releases their reservations and concurrency slots. Resolves with how many, once their
   * records are durable.
   */
  async abandon(reason: string): Promise<number> {
    this.#gone = true;
    const tickets = [...this.#tickets.keys()];
    await Promise.all(tickets.map((ticket) => this.#abandonOne(ticket, reason)));
    return tickets.length;
  }

  async #abandonOne(ticket: number, reason: string): Promise<void> {
    const admission = this.#tickets.get(ticket);
    this.#tickets.delete(ticket);
    // 500: the process serving the request died and its client saw the connection close.
    await admission
      ?.settle({ status: 500, usage: NO_USAGE, source: "none", channels: [], detail: { abandoned: reason } })
      .catch((error: unknown) =>
        log("error", "releasing an abandoned request failed", {
          worker: this.index,
          error: error instanceof Error ? error.message : String(error),
        }),
      );
  }
}
