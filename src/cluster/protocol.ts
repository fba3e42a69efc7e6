// The messages between a cluster primary and its workers over Bun's IPC, and the conversions of
// what crosses it. JSON serialization: for these small objects it costs less CPU than "advanced"
// (measured in docs/workers.md), and the messages of one event-loop turn travel as one array.
// Both ends are the same executable (the primary spawns its own execPath), so a message is checked
// for a known tag on receipt, not re-validated field by field on the hot path.
import type { KeyRefusal } from "../auth/keys.ts";
import { log } from "../base/log.ts";
import type { AccountId } from "../base/types.ts";
import type { AdmitInput, BalanceView, MeteredKey, Settlement } from "../billing/contract.ts";
import type { UsageEvent } from "../billing/feed.ts";
import { type ErrorKind, GatewayError } from "../wire/errors.ts";

/** AdmitInput as sent: the model by its id (the primary looks it up in its own catalog). */
export type WireAdmit = Omit<AdmitInput, "model"> & { model: string };

/** A GatewayError's fields: enough to rebuild the same 429 (message, code, headers, Retry-After). */
export interface WireError {
  kind: ErrorKind;
  message: string;
  param: string | null;
  code: string | null;
  retryAfterSeconds?: number | undefined;
  headers?: Record<string, string> | undefined;
}

/** Worker → primary. A call carries `id`; its reply carries the same `id`. */
export type ToPrimary =
  | { t: "ready"; url: string }
  | { t: "admit"; id: number; input: WireAdmit }
  | { t: "settle"; id: number; ticket: number; result: Settlement }
  | { t: "balance"; id: number; key: MeteredKey }
  /** Put every settled record in the store now (the admin API reads usage from it). */
  | { t: "flush"; id: number }
  /** Whether this worker has feed subscribers (admin event readers) and wants usage events. */
  | { t: "feed"; on: boolean }
  | { t: "balance-changed"; accountId: AccountId }
  | { t: "key-refused"; refusal: KeyRefusal };

export type Call = Extract<ToPrimary, { id: number }>;

/** Primary → worker: replies to calls, and usage events for a worker that asked for them. */
export type ToWorker =
  | { t: "admitted"; id: number; ticket: number; headers: Record<string, string> }
  | { t: "refused"; id: number; error: WireError }
  /** The call took effect: a settlement's record is durable (with its cost), a flush reached the store. */
  | { t: "done"; id: number; costNanos?: number }
  | { t: "balance"; id: number; view: BalanceView }
  | { t: "failed"; id: number; message: string }
  | { t: "event"; event: UsageEvent };

export type Reply = Exclude<ToWorker, { t: "event" }>;

// Records, not lists: a tag added to a union and forgotten here is a type error.
const TO_PRIMARY: Record<ToPrimary["t"], true> = {
  ready: true,
  admit: true,
  settle: true,
  balance: true,
  flush: true,
  feed: true,
  "balance-changed": true,
  "key-refused": true,
};
const TO_WORKER: Record<ToWorker["t"], true> = {
  admitted: true,
  refused: true,
  done: true,
  balance: true,
  failed: true,
  event: true,
};

function tagged(raw: unknown, tags: Readonly<Record<string, true>>): boolean {
  if (typeof raw !== "object" || raw === null) return false;
  const tag = (raw as { t?: unknown }).t;
  return typeof tag === "string" && Object.hasOwn(tags, tag);
}

/** The message if it carries a tag a primary knows; undefined otherwise. */
export function asToPrimary(raw: unknown): ToPrimary | undefined {
  return tagged(raw, TO_PRIMARY) ? (raw as ToPrimary) : undefined;
}

/** The message if it carries a tag a worker knows; undefined otherwise. */
export function asToWorker(raw: unknown): ToWorker | undefined {
  return tagged(raw, TO_WORKER) ? (raw as ToWorker) : undefined;
}

/** The admit input as sent: only the key fields the meter reads (a Principal also holds its allow list). */
export function toWireAdmit(input: AdmitInput): WireAdmit {
  const p = input.principal;
  return {
    ...input,
    model: input.model.id,
    principal: meteredKey(p),
  };
}

export function meteredKey(p: MeteredKey): MeteredKey {
  return {
    keyId: p.keyId,
    keyName: p.keyName,
    accountId: p.accountId,
    accountName: p.accountName,
    dailyCap: p.dailyCap,
    rpm: p.rpm,
    concurrency: p.concurrency,
    group: p.group,
    tpm: p.tpm,
    budgets: p.budgets,
    accountBudgets: p.accountBudgets,
  };
}

export function toWireError(error: GatewayError): WireError {
  return {
    kind: error.kind,
    message: error.message,
    param: error.param,
    code: error.code,
    retryAfterSeconds: error.retryAfterSeconds,
    headers: error.headers,
  };
}

/** The same GatewayError the primary threw, rebuilt in the worker. */
export function fromWireError(wire: WireError): GatewayError {
  return new GatewayError(wire.kind, wire.message, {
    param: wire.param,
    ...(wire.code === null ? {} : { code: wire.code }),
    ...(wire.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: wire.retryAfterSeconds }),
    ...(wire.headers === undefined ? {} : { headers: wire.headers }),
  });
}

/**
 * Queues messages and sends those of one event-loop turn as one array (one IPC write, one wakeup
 * of the other side): under load this halves the CPU of a round trip (bench/ipc.ts). A send that
 * fails (the channel closed) is logged; whoever waits for a reply learns of it from the exit.
 */
export function batched<M>(send: (messages: M[]) => void): (message: M) => void {
  let queue: M[] = [];
  const flush = () => {
    const out = queue;
    queue = [];
    try {
      send(out);
    } catch (error) {
      log("warn", "cluster message lost", {
        messages: out.length,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  };
  return (message) => {
    if (queue.push(message) === 1) setImmediate(flush);
  };
}

/** Every message of a batch (a lone message from an older sender counts as a batch of one). */
export function unbatch(raw: unknown): readonly unknown[] {
  return Array.isArray(raw) ? raw : [raw];
}
