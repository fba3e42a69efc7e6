// The usage part of the store: usage records with their ledger debits, written in batches by the
// billing writer, and the reads billing needs at start and `modelgate usage` needs for reports.
// SQLite (sqlite/usage.ts) and PostgreSQL (pg/usage.ts) implement it; they pass the same tests.
import type { AccountId, KeyId, ModelId, Nanos } from "../../base/types.ts";
import type { PricedTool, UsageCounts } from "../../wire/usage-counts.ts";

/** The store_meta row holding the last usage-journal sequence number the store received. */
export const USAGE_JOURNAL_SEQ = "usage_journal_seq";

/** The store_meta row of the store revision (moved by every change of keys, groups, accounts). */
export const REVISION_META = "revision";

/**
 * The store_meta row prefix of an account's credits ever made, in nanodollars (`credited:ID`), moved
 * in the credit's transaction. A shared limiter applies a credit as the change of this total, so it
 * never overwrites the debits other nodes have released but not stored yet.
 */
export const CREDITED_META = "credited:";

/** What a limiter is seeded from, read in one statement (one snapshot). */
export interface SeedFigures {
  /** The store revision the figures belong to. */
  revision: number;
  /** Per account id: its balance and the total of its credits (CREDITED_META, 0 when none). */
  accounts: Map<AccountId, { balance: Nanos; credited: Nanos }>;
}

/**
 * `reported`: the upstream's final usage; `counted`: a stream that ended before it, billed for what
 * the upstream delivered as the gateway's tokenizer counts it (never below a provisional figure the
 * upstream sent); `estimated`: figures the gateway assumed (an answer without usage, images without
 * the upstream's usage); `none`: nothing was produced.
 */
export type UsageSource = "reported" | "counted" | "estimated" | "none";

/** One row per client request: what was asked, what it used, what it cost, where it went. */
export interface UsageRecord extends UsageCounts {
  /** The gateway's id of the request, unique. */
  requestId: string;
  /** The id the client sent for it, if any (absent in journal lines written before it existed). */
  clientRequestId?: string | null;
  keyId: KeyId;
  accountId: AccountId;
  model: ModelId;
  endpoint: string;
  stream: boolean;
  status: number;
  costNanos: Nanos;
  usageSource: UsageSource;
  channels: string[];
  latencyMs: number;
  ttfbMs: number | null;
  clientAddress: string | null;
  endUser: string | null;
  /** The alias the client named (`[aliases]`), `model` being its target; absent when it named the model. */
  alias?: string | undefined;
  /** Answered from the response cache (`[cache]`); absent or false for an upstream answer. */
  cacheHit?: boolean | undefined;
  detail: Record<string, unknown> | null;
  /** Settlement time, ms since the epoch (the billing day a cost counts in). */
  createdAt: number;
}

export type UsageGroupBy = "model" | "key" | "day";

export interface UsageFilter {
  keyId?: KeyId | undefined;
  /** Account name. */
  account?: string | undefined;
  /** Inclusive lower bound, ms since the epoch. */
  since?: number | undefined;
  /** Exclusive upper bound, ms since the epoch. */
  until?: number | undefined;
}

export interface UsageTotals {
  /** The grouping value (model id, key id or YYYY-MM-DD day); null for the overall total. */
  group: string | null;
  requests: number;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  reasoningTokens: number;
  generations: number;
  /** Calls of each priced hosted tool (0 for a tool not called). */
  toolCalls: Record<PricedTool, number>;
  /** Audio billed per minute, in milliseconds, and input characters billed per character. */
  audioMs: number;
  characters: number;
  costNanos: Nanos;
}

export interface UsageStore {
  /**
   * Stores the records and, for each that costs something, a ledger debit and the balance change —
   * all in ONE transaction. A request id already stored is never billed twice: the record is stored
   * again only if it is a different request that reused a client-sent id (then under `id~N`).
   * Returns the request ids as stored. `journalSeq` (the usage journal's number of the last record,
   * src/billing/journal.ts) is stored in the same transaction, so a replay skips what is stored.
   * `batchId` names the batch (the writer sends the same name with every try of it): a batch
   * whose name is stored is not stored again, and the records' own ids are returned
   * (usage/batches.ts).
   */
  commit(records: readonly UsageRecord[], journalSeq?: number, batchId?: string): Promise<string[]>;
  /** The last usage-journal sequence number committed (0 when none). */
  journalSeq(): Promise<number>;
  /** Every account's balance, by account id. */
  balances(): Promise<Map<AccountId, Nanos>>;
  /** Every account's balance and credit total with the store revision, in one snapshot. */
  seedFigures(): Promise<SeedFigures>;
  /** Each key's settled cost since `since` (ms since the epoch). */
  spentByKeySince(since: number): Promise<Map<KeyId, Nanos>>;
  /** The stored record of a request id. */
  find(requestId: string): Promise<UsageRecord | undefined>;
  /** Totals over the filter, one row per group (or one overall row without groupBy). */
  totals(filter: UsageFilter, groupBy?: UsageGroupBy, dayOffsetMinutes?: number): Promise<UsageTotals[]>;
}
