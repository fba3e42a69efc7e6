// What the SQLite and PostgreSQL usage stores share: a usage record as a row of usage_records
// (the two dialects' tables infer the same row types: test/unit/store-schemas.test.ts checks it)
// and back, the ledger debits and balance changes of a batch, and the rules for replayed batches
// and reused request ids.
import { nanos } from "../../base/money.ts";
import type { AccountId } from "../../base/types.ts";
import type { ToolCalls } from "../../wire/usage-counts.ts";
import type { ledger, usageRecords } from "../sqlite/schema.ts";
import type { UsageRecord } from "./record.ts";

export type UsageRow = typeof usageRecords.$inferSelect;
export type NewUsageRow = typeof usageRecords.$inferInsert;
export type NewLedgerRow = typeof ledger.$inferInsert;

/**
 * How many of a journaled batch's first records the store already holds: the batch's numbers are
 * consecutive and end at `upTo`, and the store holds every number up to `stored`.
 */
export function coveredBy(stored: number, upTo: number, count: number): number {
  return Math.min(count, Math.max(0, stored - (upTo - count)));
}

/** Most rows per multi-row insert (28 parameters each: under SQLite's and PostgreSQL's limits). */
export const INSERT_CHUNK = 500;

/**
 * The first free N ≥ 2 for `id~N`, asked one point lookup at a time: the generator yields an N to
 * look up and is sent whether `id~N` is stored. The uses of an id are stored as `id~2`, `id~3`, …
 * without gaps, so it gallops (2, 3, 5, 9, …) past the stored ones and then halves the gap: about
 * 2·log2(uses) lookups on the unique index, where counting `id~%` with LIKE scanned the table —
 * inside the write transaction, on every settlement of a client that always sends the same
 * x-request-id. Each dialect drives it with its own (sync or async) lookup.
 */
export function* firstFreeReuse(): Generator<number, number, boolean> {
  let free = 2;
  let step = 1;
  let stored = 1;
  while (yield free) {
    stored = free;
    free += step;
    step *= 2;
  }
  // Every N ≤ stored is taken and `free` is not: the first free one lies in (stored, free].
  while (free - stored > 1) {
    const mid = stored + Math.floor((free - stored) / 2);
    if (yield mid) stored = mid;
    else free = mid;
  }
  return free;
}

export function toUsageRow(r: UsageRecord, id: string): NewUsageRow {
  return {
    requestId: id,
    clientRequestId: storableText(r.clientRequestId ?? null),
    keyId: r.keyId,
    accountId: r.accountId,
    model: r.model,
    endpoint: r.endpoint,
    stream: r.stream,
    status: r.status,
    inputTokens: r.inputTokens,
    cachedInputTokens: r.cachedInputTokens,
    // A journal line written before these fields existed has none.
    cacheWriteTokens: r.cacheWriteTokens ?? 0,
    cacheWrite1hTokens: r.cacheWrite1hTokens ?? 0,
    outputTokens: r.outputTokens,
    reasoningTokens: r.reasoningTokens,
    generations: r.generations,
    toolCalls: hasToolCalls(r.toolCalls) ? r.toolCalls : null,
    // A journal line written before these fields existed has none (and text records never do).
    audioMs: r.audioMs ?? 0,
    characters: r.characters ?? 0,
    costNanos: r.costNanos,
    usageSource: r.usageSource,
    channels: r.channels.join(","),
    latencyMs: r.latencyMs,
    ttfbMs: r.ttfbMs ?? null,
    clientAddress: r.clientAddress ?? null,
    endUser: storableText(r.endUser ?? null),
    // A journal line written before aliases existed has none.
    alias: r.alias ?? null,
    cacheHit: r.cacheHit ?? false,
    detail: r.detail ?? null,
    createdAt: r.createdAt,
  };
}

/**
 * A client's free-form text (its `user`, its request id) as both stores can hold it: PostgreSQL's
 * text takes neither a NUL nor an unpaired surrogate, and a batch holding one would fail, and every
 * batch after it. Each becomes U+FFFD, the replacement character, on both stores alike.
 */
function storableText(text: string | null): string | null {
  if (text === null) return null;
  const formed = text.toWellFormed();
  return formed.includes("\0") ? formed.replaceAll("\0", "\uFFFD") : formed;
}

/** Whether any hosted tool call is counted (a row stores null, not `{}`, when none is). */
function hasToolCalls(calls: ToolCalls | undefined): calls is ToolCalls {
  return calls !== undefined && Object.values(calls).some((n) => n !== undefined && n > 0);
}

export function fromUsageRow({
  id: _serial,
  toolCalls,
  alias,
  cacheHit,
  audioMs,
  characters,
  ...row
}: UsageRow): UsageRecord {
  return {
    ...row,
    ...(cacheHit ? { cacheHit } : {}),
    ...(toolCalls ? { toolCalls } : {}),
    ...(alias === null ? {} : { alias }),
    // Audio units only on the records that have them, as a settlement reports them.
    ...(audioMs > 0 ? { audioMs } : {}),
    ...(characters > 0 ? { characters } : {}),
    costNanos: nanos(row.costNanos),
    channels: row.channels.split(",").filter((c) => c.length > 0),
  };
}

/**
 * After a batch's one multi-row insert (`inserted`: the request ids it stored), which records were
 * not stored: each is a different request that reused a stored id, to store under `id~N`.
 */
export function reusedIn(records: readonly UsageRecord[], inserted: Iterable<string>): boolean[] {
  const taken = new Set(inserted);
  return records.map((record) => {
    if (!taken.has(record.requestId)) return true;
    taken.delete(record.requestId); // a second record with the same id in this batch is a reuse
    return false;
  });
}

/** The ledger debits of a batch stored under `ids`, and each account's total, in account order. */
export function debitsOf(
  records: readonly UsageRecord[],
  ids: readonly string[],
): { debits: NewLedgerRow[]; perAccount: [AccountId, number][] } {
  const debits: NewLedgerRow[] = [];
  const costs = new Map<AccountId, number>();
  records.forEach((record, i) => {
    if (record.costNanos <= 0) return;
    debits.push({
      accountId: record.accountId,
      amountNanos: -record.costNanos,
      kind: "debit",
      requestId: ids[i] ?? record.requestId,
      note: record.endpoint,
      createdAt: record.createdAt,
    });
    costs.set(record.accountId, (costs.get(record.accountId) ?? 0) + record.costNanos);
  });
  // In account order, so two nodes settling the same accounts never deadlock.
  return { debits, perAccount: [...costs].sort((a, b) => a[0] - b[0]) };
}
