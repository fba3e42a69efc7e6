// The real meter: admission through the limiter (RPM, concurrency, reservation against balance and
// daily cap in one atomic step), settlement into a usage record plus ledger debit written by the
// group-commit writer, and a UsageEvent on the live feed once the record is durable.
//
// Settlement policy (what the handlers report, and what this charges):
// - the cost is the price of the usage given to settle(): upstream failure before any output is
//   settled with NO_USAGE and source `none` → no charge (a `none` source is never charged);
// - a client disconnect mid-stream is settled with the upstream's reported usage if it arrived,
//   else input plus the output tokens actually delivered, source `estimated`;
// - a stream that ends incomplete is charged for what was produced, never zero.
// Every path releases the concurrency slot and the reservation; settle() is first-call-wins.

import { log } from "../base/log.ts";
import { nanos } from "../base/money.ts";
import type { Nanos } from "../base/types.ts";
import type { BillingConfig } from "../config/prices.ts";
import { BillingDay } from "../limits/day.ts";
import {
  type BudgetSpec,
  type Limiter,
  type LimiterHealth,
  LimiterUnavailableError,
  NO_LIMITER_HEALTH,
  type Ticket,
} from "../limits/limiter.ts";
import { MemoryLimiter } from "../limits/memory.ts";
import { BUDGET_PERIODS, type BudgetCalendar, calendarOf } from "../limits/periods.ts";
import type { Store } from "../store/store.ts";
import type { UsageRecord } from "../store/usage/record.ts";
import { usageRecordProblem } from "../store/usage/record-check.ts";
import { GatewayError } from "../wire/errors.ts";
import { headerFormOf } from "../wire/rate-headers.ts";
import { BalanceSync } from "./balances.ts";
import type {
  Admission,
  AdmitInput,
  BalanceView,
  BudgetFigure,
  Meter,
  MeteredKey,
  Settlement,
} from "./contract.ts";
import { Pricer } from "./cost.ts";
import type { UsageFeed } from "./feed.ts";
import { Journal, replayJournal } from "./journal.ts";
import { buildPriceTable } from "./prices.ts";
import { rateHeaders, refusalError } from "./refusal.ts";
import type { StoreThread } from "./store-thread.ts";
import { type Commit, GroupCommitWriter } from "./writer.ts";

export interface LedgerMeterOptions {
  store: Store;
  feed: UsageFeed;
  billing: BillingConfig;
  /** Defaults to an in-memory limiter with the configured billing day. */
  limiter?: Limiter | undefined;
  /**
   * The clock for windows, days and record times (ms since the epoch); default the shared
   * limiter's (Redis's), so a node's own clock decides no day, else this process's.
   */
  now?: () => number;
  /** How often the store revision is polled for credits; 0 disables polling. */
  pollMs?: number;
  /**
   * The usage journal's file: records are durable once appended to it and reach the store in
   * larger batches (journal.ts). Without it, the store commit is the durable step.
   */
  journalPath?: string | undefined;
  /**
   * Where usage batches are committed off the main thread (store-thread.ts), closed with the
   * meter; without it they are committed through `store` on this thread.
   */
  thread?: StoreThread | undefined;
}

/**
 * Most journal records stored per transaction at start (the replay), by the CLI's catch-up and
 * while serving without a store thread: ~0.7 ms of SQLite work at a time on the event loop; the
 * per-record cost is within 2 % of a batch of 256.
 */
export const STORE_BATCH = 128;

/**
 * How long journalled records wait for company before their commit to the store, in ms. Each commit
 * has a fixed cost on the store thread beside ~5 µs a record: ~0.5 ms of SQLite (the batch's
 * settlement row, the journal sequence, the first write of each page in the transaction, the
 * commit) and ~0.3 ms of waking the thread and its message. At 1,000 req/s the thread spent ~14.5
 * µs of CPU a request with 100 ms, ~10.5 with 250 and ~9 with 500 (bench/README.md, issue 31).
 * The records are durable in the journal meanwhile; another process reading the store sees them
 * this much later (the admin API flushes first).
 */
export const STORE_DELAY_MS = 500;

/**
 * Most journal records per store commit while serving with a store thread: at least what arrives
 * within STORE_DELAY_MS at 1,000 req/s, so the delay, not the size, sets the commits' pace there.
 * A transaction of this many is ~3 ms on the thread; without one (or before it is ready) commits
 * keep to STORE_BATCH.
 */
export const STORE_THREAD_BATCH = 512;

export class LedgerMeter implements Meter {
  readonly #store: Store;
  readonly #feed: UsageFeed;
  readonly #billing: BillingConfig;
  readonly #limiter: Limiter;
  readonly #now: () => number;
  readonly #day: BillingDay;
  /** The budget periods' calendar (the limiter has its own copy of the same configuration). */
  readonly #calendar: BudgetCalendar;
  readonly #pricer: Pricer;
  readonly #writer: GroupCommitWriter<UsageRecord>;
  readonly #sync: BalanceSync;
  readonly #pollMs: number;
  readonly #journal: Journal<UsageRecord> | undefined;
  readonly #thread: StoreThread | undefined;
  /** The limiter rebuilds itself from the store (a Redis limiter on PostgreSQL): releases carry journal numbers. */
  readonly #rebuilds: boolean;

  constructor(options: LedgerMeterOptions) {
    this.#store = options.store;
    this.#feed = options.feed;
    this.#billing = options.billing;
    this.#day = new BillingDay(options.billing.day_utc_offset_minutes);
    this.#calendar = calendarOf(options.billing.budgets);
    this.#limiter =
      options.limiter ??
      new MemoryLimiter({
        dayOffsetMinutes: options.billing.day_utc_offset_minutes,
        calendar: this.#calendar,
      });
    const ledger = options.store.limiterLedger?.();
    this.#rebuilds = ledger !== undefined && this.#limiter.attach?.(ledger) === true;
    const limiter = this.#limiter;
    this.#now = options.now ?? (limiter.now ? () => limiter.now?.() ?? Date.now() : Date.now);
    this.#pricer = new Pricer(buildPriceTable(options.billing));
    this.#journal = options.journalPath ? openJournal(options.journalPath) : undefined;
    const thread = options.thread;
    this.#thread = thread;
    const here: Commit<UsageRecord> = (batch, upTo, _lines, batchId) =>
      this.#store.usage.commit(batch, upTo, batchId);
    // The thread starts at the first commit (store-thread.ts); until it is ready, batches are
    // committed here, so the first records reach the store (and `modelgate usage`) as soon as later ones.
    // A retry after the thread died comes here too, with the batch's name: stored once either way.
    const commit: Commit<UsageRecord> = thread
      ? (batch, upTo, range, batchId) => {
          if (thread.ready) return thread.commit(batch, upTo, range, batchId);
          thread.start();
          return here(batch, upTo, range, batchId);
        }
      : here;
    this.#writer = new GroupCommitWriter(commit, {
      windowMs: options.billing.commit_window_ms,
      log: this.#journal,
      // Commits made here (before the thread is ready, or after it stopped) keep to the event loop's size.
      storeBatch: thread ? () => (thread.ready ? STORE_THREAD_BATCH : STORE_BATCH) : STORE_BATCH,
      storeDelayMs: STORE_DELAY_MS,
      onStored: (upTo) => limiter.stored?.(upTo),
    });
    this.#sync = new BalanceSync(this.#store, this.#limiter, this.#writer, this.#rebuilds);
    this.#pollMs = options.pollMs ?? 250;
  }

  /** Loads balances and today's spending from the store; call once before serving. */
  async start(): Promise<void> {
    if (this.#journal) await this.#replay(this.#journal);
    const now = this.#now();
    await this.#sync.start(this.#day.start(now), now, this.#pollMs);
  }

  /** Commits every settled record still queued; later settlements fail. */
  async close(): Promise<void> {
    await this.#sync.stop();
    await this.#writer.close();
    await this.#thread?.close();
    this.#journal?.close();
    await this.#limiter.close?.();
  }

  limiterHealth(): LimiterHealth {
    return this.#limiter.health?.() ?? NO_LIMITER_HEALTH;
  }

  /** Settled records not yet committed to the store (the usage journal's lag). */
  backlog(): number {
    return this.#writer.backlog();
  }

  /** Stores every settled record now (before reading usage from the store). */
  flush(): Promise<void> {
    return this.#writer.flush();
  }

  /** Stores the journal's records the store has not received (settled before a crash). */
  async #replay(journal: Journal<UsageRecord>): Promise<void> {
    const stored = await replayJournal(journal, this.#store.usage, STORE_BATCH, usageRecordProblem);
    if (stored > 0) {
      log("info", "usage journal: stored the records settled before the last stop", {
        records: stored,
        journal: journal.path,
      });
    }
  }

  async pingLimiter(): Promise<void> {
    await this.#limiter.ping?.();
  }

  /** Reloads balances from the store now (the poll does this when the store's revision moves). */
  reloadBalances(): Promise<void> {
    return this.#sync.reload();
  }

  get pricer(): Pricer {
    return this.#pricer;
  }

  #limits(principal: MeteredKey) {
    const concurrency = principal.concurrency ?? (this.#billing.default_concurrency || null);
    const tpm = this.#billing.tpm;
    return {
      rpm: principal.rpm ?? this.#billing.default_rpm,
      concurrency,
      dailyCap: principal.dailyCap,
      // The key's own, else its group's, else the default (0: none); the account's counts all its keys.
      tpm: principal.tpm ?? tpm.groups[principal.group] ?? (tpm.default || null),
      accountTpm: tpm.accounts[principal.accountName] ?? null,
      budgets: budgetsOf(principal),
      seedBudget: (budget: BudgetSpec, start: number) => this.#seedBudget(principal, budget, start),
    };
  }

  /** A budget's spending in the store since `start` (every settled record stored first). */
  async #seedBudget(principal: MeteredKey, budget: BudgetSpec, start: number): Promise<Nanos> {
    await this.#writer.flush();
    const { byKey, byAccount } = await this.#store.admin.spending(start);
    const spent = budget.name.startsWith("a:")
      ? byAccount.get(principal.accountId)
      : byKey.get(principal.keyId);
    return nanos(spent ?? 0);
  }

  async admit(input: AdmitInput): Promise<Admission> {
    const { principal } = input;
    const reserve = input.fixedCost ?? this.#pricer.worstCase(input.model, input.worstCase);
    const tokens = worstTokens(input);
    const now = this.#now();
    const result = await limiterCall(async () => {
      const knew = await this.#limiter.knowsAccount(principal.accountId);
      if (!knew) await this.#sync.reload();
      const request = {
        keyId: principal.keyId,
        accountId: principal.accountId,
        tokens,
        ...this.#limits(principal),
      };
      const first = await this.#limiter.acquire({ ...request, reserve, now });
      // A shared limiter that lost the account's balance (Redis restarted empty) reseeds and retries once.
      if (first.ok || first.refusal !== "insufficient_quota" || !knew) return first;
      if (await this.#limiter.knowsAccount(principal.accountId)) return first;
      await this.#sync.reload();
      await this.#sync.seedSpent(this.#day.start(now), now);
      return this.#limiter.acquire({ ...request, reserve, now });
    });
    if (!result.ok) {
      throw refusalError(result.refusal, result.facts, result.retryAfterMs, result.rate, {
        keyName: principal.keyName || principal.keyId,
        accountName: principal.accountName,
        worstCase: reserve,
        dayEnd: new Date(this.#day.end(now)).toISOString(),
        form: headerFormOf(input.endpoint),
        now,
        tokens,
      });
    }
    return this.#admission(input, result.ticket, rateHeaders(result.rate, headerFormOf(input.endpoint), now));
  }

  #admission(input: AdmitInput, ticket: Ticket, headers: Record<string, string>): Admission {
    const startedAt = performance.now();
    let settled: Promise<Nanos> | undefined;
    return {
      headers,
      settle: (result: Settlement) => {
        settled ??= this.#settle(input, ticket, result, Math.round(performance.now() - startedAt));
        return settled;
      },
    };
  }

  async #settle(input: AdmitInput, ticket: Ticket, result: Settlement, latencyMs: number): Promise<Nanos> {
    let cost: Nanos;
    try {
      cost =
        result.source === "none"
          ? nanos(0)
          : (input.fixedCost ??
            this.#pricer.actual(input.model, input.worstCase, result.usage, result.detail));
    } catch (error) {
      // The slot and the reservation must be released whatever happens: charge what was reserved.
      log("error", "pricing a settled request failed; charging its reservation", {
        request_id: input.requestId,
        error: error instanceof Error ? error.message : String(error),
      });
      cost = ticket.reserved;
    }
    const now = this.#now();
    const record = toRecord(input, result, cost, latencyMs, now);
    // The token windows keep what the request used in place of its worst case.
    const used = ticket.tokenWindows
      ? result.source === "none"
        ? 0
        : result.usage.inputTokens + result.usage.outputTokens
      : undefined;
    if (this.#rebuilds) {
      // The release carries the record's journal number, so it follows the append: Redis then
      // counts the debit once whether or not the ledger already holds the record (redis-scripts.ts).
      let seq: number | undefined;
      try {
        seq = await this.#writer.write(record);
      } finally {
        await this.#limiter.release(ticket, cost, now, seq, used);
      }
    } else {
      // Release and enqueue without an await between them: a balance reload sees either neither or
      // both (the debit applied in memory and the record queued).
      const released = this.#limiter.release(ticket, cost, now, undefined, used);
      const durable = this.#writer.write(record);
      await released;
      await durable;
    }
    // The event is built only for someone to read it (the admin feed is usually unwatched).
    if (this.#feed.subscribers === 0) return cost;
    this.#feed.publish({
      requestId: record.requestId,
      clientRequestId: record.clientRequestId ?? null,
      at: now,
      method: input.method,
      endpoint: input.endpoint,
      keyId: input.principal.keyId,
      keyName: input.principal.keyName,
      accountId: input.principal.accountId,
      model: input.model.id,
      stream: input.stream,
      status: result.status,
      ...result.usage,
      costNanos: cost,
      usageSource: result.source,
      latencyMs,
      ttfbMs: result.ttfbMs ?? null,
      channels: result.channels,
      clientAddress: input.clientAddress ?? null,
    });
    return cost;
  }

  async budgetFigures(principal: MeteredKey, scope: "key" | "account"): Promise<BudgetFigure[]> {
    const now = this.#now();
    const prefix = scope === "key" ? "k:" : "a:";
    const specs = (budgetsOf(principal) ?? []).filter((spec) => spec.name.startsWith(prefix));
    return limiterCall(() =>
      Promise.all(
        specs.map(async (spec): Promise<BudgetFigure> => {
          const held = await this.#limiter.budget?.(principal.accountId, spec, now);
          const { start, end } = held ?? this.#calendar.bounds(spec.period, now);
          // No figure held yet (no request since start): the store's is the spending.
          const spent = held?.spent ?? (await this.#seedBudget(principal, spec, start));
          const reserved = held?.reserved ?? nanos(0);
          return {
            period: spec.period,
            limit: spec.limit,
            spent,
            reserved,
            remaining: nanos(Math.max(0, spec.limit - spent - reserved)),
            start,
            end: spec.period === "total" ? null : end,
          };
        }),
      ),
    );
  }

  /** The calling key's money figures for GET /v1/dashboard/billing/balance. */
  async balance(principal: MeteredKey): Promise<BalanceView> {
    const now = this.#now();
    const { snapshot, rate } = await limiterCall(async () => {
      if (!(await this.#limiter.knowsAccount(principal.accountId))) await this.#sync.reload();
      const snapshot = await this.#limiter.snapshot(principal.keyId, principal.accountId, now);
      const limits = this.#limits(principal);
      const rate = await this.#limiter.peek(principal.keyId, principal.accountId, limits.rpm, now, limits);
      return { snapshot, rate };
    });
    return { ...snapshot, dailyCap: principal.dailyCap, headers: rateHeaders(rate, "openai", now) };
  }
}

/** The budgets a key's requests must fit: its own (weekly, monthly, total) and its account's. */
function budgetsOf(principal: MeteredKey): BudgetSpec[] | undefined {
  if (principal.budgets === null && principal.accountBudgets === null) return undefined;
  const specs: BudgetSpec[] = [];
  for (const period of BUDGET_PERIODS) {
    const own = principal.budgets?.[period];
    if (own !== undefined) specs.push({ name: `k:${principal.keyId}:${period}`, period, limit: nanos(own) });
    const account = principal.accountBudgets?.[period];
    if (account !== undefined) specs.push({ name: `a:${period}`, period, limit: nanos(account) });
  }
  return specs.length > 0 ? specs : undefined;
}

/** A request's worst case in tokens: its counted prompt plus its output cap (text; other kinds hold none). */
function worstTokens(input: AdmitInput): number {
  const worst = input.worstCase;
  return worst.kind === "text" ? worst.inputTokens + worst.maxOutputTokens : 0;
}

/** Runs limiter steps; a limiter that cannot be reached becomes a 503 the client may retry. */
async function limiterCall<T>(steps: () => Promise<T>): Promise<T> {
  try {
    return await steps();
  } catch (error) {
    if (!(error instanceof LimiterUnavailableError)) throw error;
    log("warn", "limiter unavailable; request refused", { error: error.message });
    throw new GatewayError(
      "limiter_unavailable",
      "The gateway cannot reach its shared limiter (Redis), so it cannot check this key's limits and balance; nothing was charged. Retry shortly; if it persists, the operator must restore Redis.",
      { retryAfterSeconds: 1 },
    );
  }
}

function openJournal(path: string): Journal<UsageRecord> | undefined {
  const journal = Journal.open<UsageRecord>(path);
  if (!journal) {
    log(
      "warn",
      "usage journal is held by another running modelgate; committing usage to the store directly",
      {
        journal: path,
      },
    );
  }
  return journal;
}

function toRecord(
  input: AdmitInput,
  result: Settlement,
  cost: Nanos,
  latencyMs: number,
  now: number,
): UsageRecord {
  return {
    requestId: input.requestId,
    clientRequestId: input.clientRequestId ?? null,
    keyId: input.principal.keyId,
    accountId: input.principal.accountId,
    model: input.model.id,
    endpoint: input.endpoint,
    stream: input.stream,
    status: result.status,
    ...result.usage,
    costNanos: cost,
    usageSource: result.source,
    channels: result.channels,
    latencyMs,
    ttfbMs: result.ttfbMs ?? null,
    clientAddress: input.clientAddress ?? null,
    endUser: input.endUser ?? null,
    ...(input.alias === undefined ? {} : { alias: input.alias }),
    ...(input.cacheHit ? { cacheHit: true } : {}),
    detail: result.detail ?? null,
    createdAt: now,
  };
}
