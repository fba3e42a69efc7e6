// The limiter seam: per-key requests-per-minute and concurrency, and the money reservation that
// must fit in the account balance and the key's daily cap — all decided in ONE atomic step, so
// concurrent requests can never overspend. In memory (memory.ts) for one process; on Redis
// (redis.ts) for several nodes. Both pass the same contract (test/unit/limits-limiter.test.ts runs
// against a factory), and both take their terms from here: the billing day, the RPM window's
// length, and how the figures an engine read become the contract's answers.
import { nanos } from "../base/money.ts";
import type { AccountId, KeyId, Nanos } from "../base/types.ts";
import { BillingDay } from "./day.ts";
import { BudgetCalendar, type BudgetPeriod } from "./periods.ts";

export const MINUTE_MS = 60_000;
/** How long a client refused for concurrency, or for its balance or daily cap, is told to wait. */
export const CONCURRENCY_RETRY_MS = 1_000;
export const BALANCE_RETRY_MS = 60_000;

export interface AcquireRequest {
  keyId: KeyId;
  accountId: AccountId;
  /** Requests per sliding minute; null = no limit. */
  rpm: number | null;
  /** Requests in flight; null = no limit. */
  concurrency: number | null;
  /** Money per billing day; null = no cap. */
  dailyCap: Nanos | null;
  /** The worst-case cost to reserve. */
  reserve: Nanos;
  /** Milliseconds since the epoch, from the meter's clock. */
  now: number;
  /** Tokens per sliding minute of the key; null or absent = no limit. */
  tpm?: number | null;
  /** Tokens per sliding minute of the key's account (all its keys together); null or absent = no limit. */
  accountTpm?: number | null;
  /**
   * The request's worst case in tokens (counted prompt plus the output cap), held in the token
   * windows until the release corrects it to the tokens used.
   */
  tokens?: number;
  /** Budgets with periods the reservation must fit in too (spent + reserved + reserve ≤ limit). */
  budgets?: BudgetSpec[] | undefined;
  /**
   * What the store holds as spent in a budget's period (from `start`): called when the limiter
   * holds no figure for the period yet (a first use, or Redis lost it); the acquire then retries.
   */
  seedBudget?: (budget: BudgetSpec, start: number) => Promise<Nanos>;
}

/** One budget of a key or an account, as admission checks it. */
export interface BudgetSpec {
  /** Its counter, unique within the account: `k:<keyId>:<period>` or `a:<period>`. */
  name: string;
  period: BudgetPeriod;
  limit: Nanos;
}

/** A budget's period as a ticket holds it: its reservation is freed there and its cost counted. */
export interface HeldBudget {
  name: string;
  start: number;
  end: number;
}

/** A token window's figures as both engines read them: what it holds and when its oldest entry leaves. */
export interface TokenFigures {
  used: number;
  resetMs: number;
}

/** The requests-per-minute window as the x-ratelimit-* headers report it. */
export interface RateState {
  limit: number | null;
  remaining: number | null;
  /** Milliseconds until the oldest request in the window leaves it (0 when the window is empty). */
  resetMs: number;
  /**
   * The tokens-per-minute window, when a token limit applies to the key: the rate-limit headers'
   * token forms are sent from it (src/wire/rate-headers.ts), and only when it is present.
   */
  tokens?: { limit: number; remaining: number; resetMs: number } | undefined;
}

export type Refusal =
  | "rate_limit_exceeded"
  | "token_rate_limit_exceeded"
  | "concurrency_limit_exceeded"
  | "insufficient_quota"
  | "daily_quota_exceeded"
  | "budget_exceeded";

/** What an admitted request holds until it is released. */
export interface Ticket {
  /** Unique per admission: the reservation and the slot are keyed by it, and releases are idempotent by it. */
  id: string;
  keyId: KeyId;
  accountId: AccountId;
  reserved: Nanos;
  /** The tokens held in the token windows (absent when no token limit applied). */
  tokens?: number;
  /** Which token windows hold them: the key's, the account's. */
  tokenWindows?: { key: boolean; account: boolean };
  /** The budgets the reservation is counted in, with their periods at admission. */
  budgets?: HeldBudget[] | undefined;
}

/** The figures behind a refusal, for a message that says what to do. */
export interface RefusalFacts {
  limit: number;
  balance: Nanos;
  reserved: Nanos;
  spent: Nanos;
  /** The budget a `budget_exceeded` refusal hit, and when its period ends (ms). */
  budget?: { name: string; period: BudgetPeriod; end: number };
}

export type AcquireResult =
  | { ok: true; ticket: Ticket; rate: RateState }
  | { ok: false; refusal: Refusal; retryAfterMs: number; rate: RateState; facts: RefusalFacts };

export interface LimitSnapshot {
  balance: Nanos;
  /** Reservations of the account's requests in flight. */
  accountReserved: Nanos;
  /** Settled cost of the key in the current billing day. */
  spentToday: Nanos;
  /** Reservations of the key's requests in flight. */
  keyReserved: Nanos;
  inFlight: number;
  /** Start of the current billing day and of the next one (ms since the epoch). */
  dayStart: number;
  dayEnd: number;
}

export interface Limiter {
  /** Admits (counting the request, taking a slot, reserving) or refuses with nothing changed. */
  acquire(request: AcquireRequest): Promise<AcquireResult>;
  /**
   * Releases the slot and turns the reservation into `cost` (debited and counted as spent). `seq`
   * is the usage record's number in this node's journal, given to a limiter attached to a ledger:
   * the debit then counts once whether the ledger already holds the record or not. `tokens` (the
   * tokens the request used) replaces the worst case the ticket holds in its token windows.
   */
  release(ticket: Ticket, cost: Nanos, now: number, seq?: number, tokens?: number): Promise<void>;
  /**
   * The RPM window without counting a request (for answers that are not admitted requests), and
   * the token windows when `tpm` names their limits.
   */
  peek(
    keyId: KeyId,
    accountId: AccountId,
    rpm: number | null,
    now: number,
    tpm?: { tpm: number | null; accountTpm: number | null },
  ): Promise<RateState>;
  snapshot(keyId: KeyId, accountId: AccountId, now: number): Promise<LimitSnapshot>;
  /**
   * A budget's figures in the period that contains `now`: spent there, reserved by requests in
   * flight, and the period's bounds; undefined when the limiter holds no figure for it yet.
   */
  budget?(
    accountId: AccountId,
    budget: BudgetSpec,
    now: number,
  ): Promise<{ spent: Nanos; reserved: Nanos; start: number; end: number } | undefined>;
  /** Whether the account's balance is known (loaded from the store). */
  knowsAccount(accountId: AccountId): Promise<boolean>;
  /**
   * Sets an account's balance as the store has it at `revision` (at start, and after credits made
   * elsewhere). A shared limiter applies it only when it holds no balance or an older revision, so
   * nodes seeding at once converge; given `credited` (the store's credit total of the account), a
   * shared limiter that already holds the account moves its balance by the change of that total
   * instead, keeping the debits other nodes released and have not stored yet. The in-memory one
   * always sets the balance (it is the only one counting).
   */
  setBalance(accountId: AccountId, balance: Nanos, revision: number, credited?: Nanos): Promise<void>;
  /**
   * Sets what a key (of `accountId`) has spent in the billing day that contains `now` (at start). A
   * shared limiter applies it once per billing day, never adding to what it counts.
   */
  setSpent(keyId: KeyId, accountId: AccountId, spent: Nanos, now: number): Promise<void>;
  /**
   * Makes a shared limiter rebuild itself from the ledger (generations, seeds, reconciliation; see
   * LimiterLedger). True when it did: balances and spending then come from rebase(), not from
   * setBalance/setSpent, and releases need their journal sequence.
   */
  attach?(ledger: LimiterLedger): boolean;
  /** An attached limiter's seed and reconciliation: every account rebuilt from the ledger now. */
  rebase?(): Promise<void>;
  /** The ledger now holds this node's journal records up to `seq` (an attached limiter forgets them). */
  stored?(seq: number): void;
  /** The shared clock (ms since the epoch) every node's days and records use, when there is one. */
  now?(): number;
  /** A shared limiter's epoch and what its reconciliations corrected (for metrics). */
  health?(): LimiterHealth;
  /** Checks a shared limiter can be reached now (for /readyz); throws LimiterUnavailableError if not. */
  ping?(): Promise<void>;
  /** Stops background work (a shared limiter's lease heartbeat) and closes connections. */
  close?(): Promise<void>;
}

/** A shared limiter's state for metrics: its epoch and what reconciling it with the ledger corrected. */
export interface LimiterHealth {
  epoch: number;
  correctedAccounts: number;
  /** Sum of the absolute balance corrections, nanodollars. */
  correctedNanos: number;
}

export const NO_LIMITER_HEALTH: LimiterHealth = { epoch: 0, correctedAccounts: 0, correctedNanos: 0 };

/** The ledger's figures a shared limiter is rebuilt from, read in one snapshot. */
export interface LedgerFigures {
  /** The store revision they belong to. */
  revision: number;
  /** Each account's balance, by account id. */
  balances: Map<AccountId, Nanos>;
  /** How far the ledger holds each node's usage journal (its stored sequence), by journal name. */
  journals: Map<string, number>;
  /** Each key's settled cost since the day start asked for, with its account. */
  spent: { keyId: KeyId; accountId: AccountId; spent: Nanos }[];
}

/**
 * What a shared limiter needs of the ledger (the store) to tell its copy is current and rebuild it:
 * the ledger's identity and epoch, the nodes alive, and the figures. The store implements it
 * (PostgreSQL: src/store/pg/limiter-ledger.ts).
 */
export interface LimiterLedger {
  /** This node's usage journal, as `journals` names it. */
  readonly journal: string;
  /** The ledger's id (made once per database) and the limiter epoch it records. */
  identity(): Promise<{ ledger: string; epoch: number }>;
  /** Moves the ledger's epoch past both its own and `seen`; tells every node (a revision change). */
  nextEpoch(seen: number): Promise<number>;
  /** Records `node` alive now; returns the nodes seen alive within `withinMs` (this one included). */
  beat(node: string, withinMs: number): Promise<string[]>;
  /** Removes `node` from the nodes alive (at a clean stop). */
  leave(node: string): Promise<void>;
  /** Balances, journal positions and each key's spending since `dayStart`, in one snapshot. */
  figures(dayStart: number): Promise<LedgerFigures>;
}

/** What both engines are configured with. */
export interface LimiterOptions {
  /** Billing day offset from UTC in minutes. */
  dayOffsetMinutes?: number;
  /** Length of the RPM window (default a minute). */
  windowMs?: number;
  /** The calendar of budget periods (default UTC, weeks from Monday, months from the 1st). */
  calendar?: BudgetCalendar;
}

/** What an engine read of a key and its account at the time of its decision. */
export interface KeyFigures {
  balance: number;
  accountReserved: number;
  keyReserved: number;
  /** Settled cost of the key in the current billing day. */
  spent: number;
}

/**
 * The terms both engines decide by, and how what they read becomes an answer: the two differ only
 * in where the counters live and how the step is made atomic.
 */
export class LimitTerms {
  readonly day: BillingDay;
  /** The billing day's offset from UTC, in ms. */
  readonly dayOffsetMs: number;
  readonly windowMs: number;
  readonly calendar: BudgetCalendar;

  constructor(options: LimiterOptions) {
    this.calendar = options.calendar ?? new BudgetCalendar({ timeZone: "UTC" });
    const offset = options.dayOffsetMinutes ?? 0;
    this.day = new BillingDay(offset);
    this.dayOffsetMs = offset * 60_000;
    this.windowMs = options.windowMs ?? MINUTE_MS;
  }

  /** The RPM window as the x-ratelimit-* headers report it, from its count and reset. */
  rate(rpm: number | null, count: number, resetMs: number): RateState {
    return { limit: rpm, remaining: rpm === null ? null : Math.max(0, rpm - count), resetMs };
  }

  /**
   * Adds the token window the headers report: the tighter of the key's and the account's (the one
   * with fewer tokens left), when either has a limit.
   */
  withTokens(
    rate: RateState,
    request: Pick<AcquireRequest, "tpm" | "accountTpm">,
    key: TokenFigures | undefined,
    account: TokenFigures | undefined,
  ): RateState {
    const windows: { limit: number; remaining: number; resetMs: number }[] = [];
    if (request.tpm != null && key)
      windows.push({
        limit: request.tpm,
        remaining: Math.max(0, request.tpm - key.used),
        resetMs: key.resetMs,
      });
    if (request.accountTpm != null && account)
      windows.push({
        limit: request.accountTpm,
        remaining: Math.max(0, request.accountTpm - account.used),
        resetMs: account.resetMs,
      });
    if (windows.length === 0) return rate;
    windows.sort((a, b) => a.remaining - b.remaining);
    return { ...rate, tokens: windows[0] };
  }

  /**
   * A refusal as both engines answer it: how long to wait (the RPM window's reset, a second for a
   * slot, a minute for money, the day's end for the daily cap) and the limit it hit.
   */
  refuse(
    refusal: Refusal,
    request: AcquireRequest,
    figures: KeyFigures,
    rate: RateState,
    now: number,
    tokenWait?: number,
    tokenLimit?: number,
  ): AcquireResult {
    const facts = {
      limit: 0,
      balance: nanos(figures.balance),
      reserved: nanos(figures.accountReserved),
      spent: nanos(figures.spent),
    };
    let retryAfterMs = BALANCE_RETRY_MS;
    if (refusal === "rate_limit_exceeded") {
      retryAfterMs = rate.resetMs;
      facts.limit = request.rpm ?? 0;
    } else if (refusal === "token_rate_limit_exceeded") {
      // The wait until enough tokens leave the window that refused (a request larger than the
      // limit never fits: it is told the window's length and the message says why).
      retryAfterMs = tokenWait ?? this.windowMs;
      facts.limit = tokenLimit ?? 0;
    } else if (refusal === "concurrency_limit_exceeded") {
      retryAfterMs = CONCURRENCY_RETRY_MS;
      facts.limit = request.concurrency ?? 0;
    } else if (refusal === "insufficient_quota") {
      facts.limit = figures.balance;
    } else {
      retryAfterMs = this.day.end(now) - now;
      facts.limit = request.dailyCap ?? 0;
      facts.reserved = nanos(figures.keyReserved);
    }
    return { ok: false, refusal, retryAfterMs, rate, facts };
  }

  /**
   * A budget refusal: the figures of the budget it hit (spent in its period, reserved by requests
   * in flight), told to wait until the period ends.
   */
  refuseBudget(
    budget: BudgetSpec,
    end: number,
    figures: { balance: number; spent: number; reserved: number },
    rate: RateState,
    now: number,
  ): AcquireResult {
    return {
      ok: false,
      refusal: "budget_exceeded",
      retryAfterMs: Math.max(0, Math.min(end, now + 366 * 86_400_000) - now),
      rate,
      facts: {
        limit: budget.limit,
        balance: nanos(figures.balance),
        reserved: nanos(figures.reserved),
        spent: nanos(figures.spent),
        budget: { name: budget.name, period: budget.period, end },
      },
    };
  }

  /** A key's snapshot in the billing day that contains `now`. */
  snapshot(figures: KeyFigures, inFlight: number, now: number): LimitSnapshot {
    return {
      balance: nanos(figures.balance),
      accountReserved: nanos(figures.accountReserved),
      spentToday: nanos(figures.spent),
      keyReserved: nanos(figures.keyReserved),
      inFlight,
      dayStart: this.day.start(now),
      dayEnd: this.day.end(now),
    };
  }
}

/**
 * The limiter's shared state cannot be reached (Redis down or too slow): the request is not
 * admitted, nothing is counted, and the client is told to retry (503 `limiter_unavailable`).
 */
export class LimiterUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "LimiterUnavailableError";
  }
}
