// The Redis limiter: the Limiter contract for several gateway nodes sharing one Redis. Each
// admission and each release is one atomic Lua script (redis-scripts.ts), so nodes admitting at once
// can never over-admit the RPM window, the concurrency slots or the money.
//
// Time: by default every decision uses Redis's clock (TIME inside the script), and the `now`
// arguments of the interface are ignored, so node clocks do not matter; now() gives the same clock
// to the node (its records and billing days). With `clock: "caller"` the RPM window and the
// billing day use the `now` passed in (the contract tests' clock); lease expiry always uses Redis time.
//
// Leases: a concurrency slot and its reservation are held under a lease that this node's heartbeat
// renews while the ticket is open. A node that stops (crash, SIGKILL, partition) stops renewing; the
// next script touching the account frees its slots and reservations once the lease ran out.
//
// Generations (attached to a ledger, the cluster case): Redis's figures are a copy the ledger can
// rebuild, trusted only in the epoch it was built in (redis-epoch.ts). After a reconnection, a
// stale answer and on every heartbeat the node checks Redis's epoch; when Redis lost its data,
// restarted from a snapshot, failed over, or holds another database's figures, a node moves the
// ledger's epoch on and every node re-registers in the new one the tickets it holds and the
// releases the ledger may lack, and acknowledges it. Accounts are seeded from the ledger only once
// every node alive has (or a lease has passed): the reservations of requests in flight are never
// handed out twice. Releases carry their record's journal sequence, so each counts once whether
// the ledger held the record at the seed or not; a periodic reconciliation (one node at a time)
// seeds every account again from the ledger and reports what it corrected.
//
// Failure policy: every call has a deadline (`timeoutMs`); a Redis that is down or slower than that
// makes acquire/peek/snapshot/knowsAccount throw LimiterUnavailableError (the gateway answers 503
// `limiter_unavailable`), and so does a rebuild the ledger cannot serve (PostgreSQL down too).
// There is no offline queue and no local fallback. A release that fails is kept and retried by the
// heartbeat until Redis takes it. An acquire we stopped waiting for may still run in Redis: it is
// cancelled by ticket id (now, then by the heartbeat), which frees whatever it admitted and makes it
// refuse if it runs later still.
import { RedisClient } from "bun";
import { log } from "../base/log.ts";
import { nanos } from "../base/money.ts";
import type { AccountId, KeyId, Nanos } from "../base/types.ts";
import {
  type AcquireRequest,
  type AcquireResult,
  type BudgetSpec,
  type LedgerFigures,
  type Limiter,
  type LimiterHealth,
  type LimiterLedger,
  type LimiterOptions,
  LimiterUnavailableError,
  type LimitSnapshot,
  LimitTerms,
  type RateState,
  type Refusal,
  type Ticket,
} from "./limiter.ts";
import { fields, REDIS_TIMEOUT_MS, RedisCalls, redacted } from "./redis-call.ts";
import {
  type Correction,
  type EpochState,
  epochState,
  runIdOf,
  seedArgs,
  seedOutcome,
  staleReason,
} from "./redis-epoch.ts";
import { RedisKeys } from "./redis-keys.ts";
import { SCRIPTS, type Script } from "./redis-scripts.ts";

/** How often the nodes check that the other nodes acknowledged a new epoch. */
const BARRIER_POLL_MS = 20;
/** How long a clean stop waits to leave the ledger's list of nodes alive (it may be down). */
const LEAVE_WAIT_MS = 1_000;
/** How long a ledger call may take before the step is unavailable (PostgreSQL cut off, not refusing). */
const LEDGER_WAIT_MS = 2_000;
/** How long an epoch check waits for the ledger's identity before it uses the one read last. */
const IDENTITY_WAIT_MS = 300;

/** Seed scripts one rebuild or reconciliation has in flight at a time. */
const SEEDS_IN_FLIGHT = 256;
/** Most releases one RELEASE script carries (bounds the time one script holds Redis). */
const RELEASES_PER_SCRIPT = 64;
/** How often an epoch check starts over when another node began a newer epoch meanwhile. */
const CHECK_ATTEMPTS = 3;

/** Redis moved to a newer epoch while this node worked in (or entered) an older one. */
class EpochMoved extends LimiterUnavailableError {}

const REFUSALS: Record<number, Refusal> = {
  1: "rate_limit_exceeded",
  2: "concurrency_limit_exceeded",
  3: "insufficient_quota",
  4: "daily_quota_exceeded",
  8: "token_rate_limit_exceeded",
};
/** ACQUIRE's refusal for an account not seeded in the caller's epoch, and for a caller behind. */
const UNSEEDED = 6;
const BEHIND = 7;

/** The acquire and snapshot scripts' replies, in order (redis-scripts.ts). */
const ACQUIRE_REPLY = [
  "admitted",
  "refusal",
  "count",
  "resetMs",
  "balance",
  "accountReserved",
  "keyReserved",
  "spent",
  "now",
  "redisMs",
  "keyTokens",
  "keyTokensResetMs",
  "accountTokens",
  "accountTokensResetMs",
  "tokenWaitMs",
  "tokenLimit",
  "budget",
  "budgetSpent",
  "budgetReserved",
] as const;
/** ACQUIRE's answers about budgets: one has no figure yet, the caller's period is not Redis's, one is spent. */
const BUDGET_UNSEEDED = 9;
const BUDGET_MOVED = 10;
const BUDGET_REFUSED = 11;
const PEEK_REPLY = [
  "count",
  "resetMs",
  "keyTokens",
  "keyTokensResetMs",
  "accountTokens",
  "accountTokensResetMs",
] as const;
const SNAPSHOT_REPLY = [
  "balance",
  "accountReserved",
  "keyReserved",
  "inFlight",
  "spent",
  "now",
  "loaded",
] as const;

export interface RedisLimiterOptions extends LimiterOptions {
  /** redis://[user:password@]host:port[/db] */
  url: string;
  /** Namespace of this cluster's keys; nodes with the same prefix share limits. */
  prefix: string;
  /** How long a slot outlives its node's last heartbeat (default 15 s). */
  leaseMs?: number;
  /** How often held leases are renewed (default a third of the lease). */
  heartbeatMs?: number;
  /**
   * Deadline of every Redis call (default REDIS_TIMEOUT_MS); time the node's own event loop was
   * busy does not count against it (see #deadline).
   */
  timeoutMs?: number;
  /** How long a cancelled ticket id is remembered so a late acquire or release changes nothing (default 10 min). */
  doneMs?: number;
  /** Whose clock decides windows and days: Redis's (default) or the `now` arguments. */
  clock?: "redis" | "caller";
  /** How often one node reconciles every account with the ledger (attached; default 10 s). */
  reconcileMs?: number;
  /** How long an admission waits for a rebuild (other nodes re-registering) before a 503 (default 2 s). */
  rebuildWaitMs?: number;
  /** This node's own clock (default Date.now); a test shifts it to show node clocks do not matter. */
  localClock?: () => number;
  /**
   * How often an attached node reads Redis's epoch (default 250 ms): a node that is idle, or cut
   * off from the ledger and its notifications, still enters a new epoch within this.
   */
  epochWatchMs?: number;
}

/** An acquire this node gave up waiting for, to be undone in Redis in case it ran there. */
interface Cancel {
  id: string;
  accountId: AccountId;
  /** The key's RPM window (the admission, if made, is taken out of it). */
  window: string;
  /** The token windows' hashes the admission was made in (its entries are set to 0). */
  tokenHashes: string[];
  /** The epoch it was sent in: in another one it admitted nothing still counted. */
  epoch: number;
  /**
   * Local time after which the heartbeat stops trying: by then the admission's lease has run out
   * and the next script on the account frees its slot anyway (this bounds the map while Redis hangs).
   */
  until: number;
}

interface Held {
  ticket: Ticket;
  /** Set once settled: the release still has to reach Redis (`seq`: its record's journal number). */
  release?: { cost: Nanos; now: number; seq: number | undefined; tokens: number | undefined };
}

/** Releases of one account sent in one script, and that script's outcome. */
interface ReleaseBatch {
  helds: Held[];
  sent: Promise<void>;
}

/** What the reconciliations found, since start (reported by log and metrics). */
export interface ReconcileStats {
  runs: number;
  /** Accounts whose figures differed from the ledger's (with the releases it lacked) and were set to it. */
  corrected: number;
  /** Sum of |balance correction| in nanodollars. */
  balanceNanos: number;
  /** Duration of the last one in ms. */
  lastMs: number;
}

export class RedisLimiter implements Limiter {
  readonly #client: RedisClient;
  readonly #keys: RedisKeys;
  readonly #terms: LimitTerms;
  readonly #offsetMs: string;
  readonly #leaseMs: number;
  readonly #doneMs: number;
  readonly #callerClock: boolean;
  readonly #url: string;
  readonly #reconcileMs: number;
  readonly #rebuildWaitMs: number;
  readonly #localClock: () => number;
  readonly #epochWatchMs: number;
  #epochWatch: ReturnType<typeof setInterval> | undefined;
  /** This process among the nodes (acknowledgements, the ledger's list of nodes alive). */
  readonly #node = crypto.randomUUID();
  /** Tickets this node holds (renewed by the heartbeat) and releases not yet applied. */
  readonly #held = new Map<string, Held>();
  /** Releases (by journal sequence) the ledger may not hold yet: sent again in a new epoch. */
  readonly #unstored = new Map<number, Held>();
  /** Releases to send at the end of this turn, by epoch and account (see #releaseSoon). */
  readonly #releasing = new Map<string, ReleaseBatch>();
  /** Timed-out acquires not yet undone in Redis (see #cancel). */
  readonly #cancels = new Map<string, Cancel>();
  /** Accounts seen seeded in Redis: knowsAccount answers from here without a round trip. */
  readonly #known = new Set<number>();
  readonly #heartbeat: ReturnType<typeof setInterval>;
  #connecting: Promise<void> | undefined;
  /** The heartbeat running now: a second call (the timer, close) waits for it instead of overlapping. */
  #beating: Promise<void> | undefined;
  #closed = false;
  readonly #calls: RedisCalls;
  /** Redis ms minus this node's clock, from the last script's answer. */
  #clockOffset = 0;
  /** The ledger the copy is rebuilt from (attach); without one the epoch stays 0. */
  #ledger: LimiterLedger | undefined;
  #identity: { ledger: string; epoch: number } | undefined;
  #epoch = 0;
  /** False after a (re)connection or a stale answer: the epoch is checked before the next step. */
  #checked = true;
  #checking: Promise<void> | undefined;
  /** The epoch whose accounts may be seeded (every node alive acknowledged it, or a lease passed). */
  #barrierEpoch = 0;
  #rebasing: Promise<void> | undefined;
  /** The highest journal number of this node the ledger confirmed storing (it never goes back, unless restored). */
  #storedSeq = 0;
  readonly reconciled: ReconcileStats = { runs: 0, corrected: 0, balanceNanos: 0, lastMs: 0 };

  private constructor(client: RedisClient, options: RedisLimiterOptions) {
    this.#client = client;
    this.#url = options.url;
    this.#calls = new RedisCalls(options.url, options.timeoutMs ?? REDIS_TIMEOUT_MS);
    this.#keys = new RedisKeys(options.prefix);
    this.#terms = new LimitTerms(options);
    this.#offsetMs = String(this.#terms.dayOffsetMs);
    this.#leaseMs = options.leaseMs ?? 15_000;
    this.#doneMs = options.doneMs ?? 600_000;
    this.#callerClock = options.clock === "caller";
    this.#reconcileMs = options.reconcileMs ?? 10_000;
    this.#rebuildWaitMs = options.rebuildWaitMs ?? 2_000;
    this.#localClock = options.localClock ?? Date.now;
    this.#epochWatchMs = options.epochWatchMs ?? 250;
    // Any (re)connection may be to another Redis process, or one that restarted from a snapshot.
    client.onconnect = () => {
      this.#checked = this.#ledger === undefined;
    };
    this.#heartbeat = setInterval(() => void this.beat(), options.heartbeatMs ?? this.#leaseMs / 3);
    this.#heartbeat.unref();
  }

  /** Connects (failing within the deadline when Redis cannot be reached) and starts the heartbeat. */
  static async connect(options: RedisLimiterOptions): Promise<RedisLimiter> {
    const timeoutMs = options.timeoutMs ?? REDIS_TIMEOUT_MS;
    const client = new RedisClient(options.url, {
      enableOfflineQueue: false,
      autoReconnect: true,
      connectionTimeout: timeoutMs,
    });
    const limiter = new RedisLimiter(client, options);
    try {
      await limiter.#deadline(client.connect(), "connecting");
      await limiter.#deadline(client.send("PING", []), "PING");
      await limiter.#readEpoch();
    } catch (error) {
      limiter.#stop();
      throw error;
    }
    return limiter;
  }

  get prefix(): string {
    return this.#keys.prefix;
  }

  /** Redis's clock as this node last saw it (ms since the epoch). */
  now(): number {
    return this.#localClock() + this.#clockOffset;
  }

  attach(ledger: LimiterLedger): boolean {
    this.#ledger = ledger;
    this.#checked = false;
    this.#epochWatch = setInterval(() => void this.#watchEpoch(), this.#epochWatchMs);
    this.#epochWatch.unref();
    return true;
  }

  /** Enters a new epoch another node began (one cheap read; the full check only when it moved). */
  async #watchEpoch(): Promise<void> {
    if (this.#closed || this.#checking || !this.#client.connected) return;
    try {
      const state = await this.#readEpoch();
      if (state.epoch === 0 || state.epoch !== this.#epoch) await this.#recheck();
    } catch (error) {
      log("debug", "redis limiter: epoch watch failed", {
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }

  async acquire(request: AcquireRequest): Promise<AcquireResult> {
    let at = request.now;
    let reply = await this.#acquireOnce(request, at);
    if (this.#ledger && (reply.refusal === BEHIND || reply.refusal === UNSEEDED)) {
      // The account is not (yet) in the epoch this node checked: check again, rebuild, retry once.
      if (reply.refusal === BEHIND) this.#checked = false;
      else await this.rebase();
      reply = await this.#acquireOnce(request, at);
    }
    // A budget without a figure is seeded from the store; a period computed for another time than
    // Redis's is computed again for Redis's (each budget needs at most one of each).
    for (let tries = 0; tries < 2 * (request.budgets?.length ?? 0) + 1; tries++) {
      const budget = request.budgets?.[reply.budget - 1];
      if (!budget || (reply.refusal !== BUDGET_UNSEEDED && reply.refusal !== BUDGET_MOVED)) break;
      at = reply.now;
      if (reply.refusal === BUDGET_UNSEEDED) {
        const { start } = this.#terms.calendar.bounds(budget.period, at);
        const spent = request.seedBudget ? await request.seedBudget(budget, start) : 0;
        await this.#run(
          SCRIPTS.setBudget,
          [this.#keys.budgets(request.accountId)],
          [budget.name, String(start), String(spent)],
        );
      }
      reply = await this.#acquireOnce(request, at);
    }
    return this.#answer(request, reply, at);
  }

  /** A budget's spending in the period that contains `now` and what is reserved in it. */
  async budget(accountId: AccountId, budget: BudgetSpec, now: number) {
    const { start, end } = this.#terms.calendar.bounds(budget.period, now);
    const reply = await this.#run(
      SCRIPTS.readBudget,
      [this.#keys.account(accountId).account, this.#keys.budgets(accountId)],
      [budget.name, String(start)],
    );
    const r = fields(reply, ["seeded", "spent", "reserved"] as const);
    if (r.seeded === 0) return undefined;
    return { spent: nanos(r.spent), reserved: nanos(r.reserved), start, end };
  }

  async #acquireOnce(
    request: AcquireRequest,
    at: number,
  ): Promise<Record<(typeof ACQUIRE_REPLY)[number], number> & { id: string }> {
    const { accountId, keyId } = request;
    const keys = this.#keys.account(accountId);
    const id = crypto.randomUUID();
    const window = this.#keys.window(accountId, keyId);
    const tokenKeys = this.#tokenKeys(accountId, keyId, request.tpm ?? null, request.accountTpm ?? null);
    const budgets = request.budgets ?? [];
    await this.#current();
    const epoch = this.#epoch;
    const sentAt = this.#localClock();
    const sent = SCRIPTS.acquire.run(
      this.#client,
      [
        keys.account,
        keys.tickets,
        keys.leases,
        window,
        keys.done,
        ...tokenKeys.flatMap((w) => [w.z, w.h]),
        ...(budgets.length > 0 ? [this.#keys.budgets(accountId)] : []),
      ],
      [
        String(epoch),
        id,
        keyId,
        limitArg(request.rpm),
        limitArg(request.concurrency),
        limitArg(request.dailyCap),
        String(request.reserve),
        this.#nowArg(request.now),
        String(this.#terms.windowMs),
        String(this.#leaseMs),
        this.#offsetMs,
        limitArg(request.tpm ?? null),
        limitArg(request.accountTpm ?? null),
        String(request.tokens ?? 0),
        String(budgets.length),
        ...budgets.flatMap((b) => {
          const { start, end } = this.#terms.calendar.bounds(b.period, at);
          return [b.name, String(b.limit), String(start), String(end)];
        }),
      ],
    );
    let reply: unknown;
    try {
      reply = await this.#deadline(sent, "a limiter script");
    } catch (error) {
      // Redis may still run the script after we gave up (too slow, or the connection dropped after
      // sending): undo it, or the slot and reservation would stay held until the lease runs out.
      const tokenHashes = tokenKeys.map((w) => w.h);
      this.#cancel({ id, accountId, window, tokenHashes, epoch, until: Date.now() + this.#leaseMs });
      throw error;
    }
    const r = fields(reply, ACQUIRE_REPLY);
    this.#learnClock(r.redisMs, sentAt);
    return { ...r, id };
  }

  #answer(
    request: AcquireRequest,
    r: Record<(typeof ACQUIRE_REPLY)[number], number> & { id: string },
    at: number,
  ): AcquireResult {
    const { accountId, keyId } = request;
    const rate = this.#terms.withTokens(
      this.#terms.rate(request.rpm, r.count, r.resetMs),
      request,
      { used: r.keyTokens, resetMs: r.keyTokensResetMs },
      { used: r.accountTokens, resetMs: r.accountTokensResetMs },
    );
    if (r.admitted === 1) {
      this.#known.add(accountId);
      const ticket: Ticket = { id: r.id, keyId, accountId, reserved: request.reserve };
      const tokenWindows = { key: request.tpm != null, account: request.accountTpm != null };
      if (tokenWindows.key || tokenWindows.account) {
        ticket.tokens = request.tokens ?? 0;
        ticket.tokenWindows = tokenWindows;
      }
      if (request.budgets && request.budgets.length > 0) {
        ticket.budgets = request.budgets.map((b) => ({
          name: b.name,
          ...this.#terms.calendar.bounds(b.period, at),
        }));
      }
      this.#held.set(r.id, { ticket });
      return { ok: true, ticket, rate };
    }
    // Not seeded (after a rebuild: not in the ledger) or still behind: nothing to spend.
    if (r.refusal === UNSEEDED || r.refusal === BEHIND) {
      this.#known.delete(accountId);
      return this.#terms.refuse("insufficient_quota", request, r, rate, r.now);
    }
    this.#known.add(accountId);
    const budget = request.budgets?.[r.budget - 1];
    if (r.refusal === BUDGET_REFUSED && budget) {
      const { end } = this.#terms.calendar.bounds(budget.period, at);
      const figures = { balance: r.balance, spent: r.budgetSpent, reserved: r.budgetReserved };
      return this.#terms.refuseBudget(budget, end, figures, rate, r.now);
    }
    const refusal = REFUSALS[r.refusal];
    if (refusal === undefined)
      throw new Error(`redis limiter: the acquire script answered refusal ${r.refusal}`);
    const wait = r.tokenWaitMs < 0 ? undefined : r.tokenWaitMs;
    return this.#terms.refuse(refusal, request, r, rate, r.now, wait, r.tokenLimit);
  }

  /** Undoes a timed-out acquire now, or (failing that) from the heartbeat until its lease would end. */
  #cancel(cancel: Cancel): void {
    this.#cancels.set(cancel.id, cancel);
    void this.#applyCancel(cancel).catch(() => undefined);
  }

  async #applyCancel(cancel: Cancel): Promise<void> {
    const keys = this.#keys.account(cancel.accountId);
    await this.#run(
      SCRIPTS.cancel,
      [keys.account, keys.tickets, keys.leases, keys.done, cancel.window, ...cancel.tokenHashes],
      [String(cancel.epoch), cancel.id, String(this.#doneMs)],
    );
    this.#cancels.delete(cancel.id);
  }

  /**
   * Applies the release in Redis; when Redis cannot take it now, keeps it for the heartbeat to retry
   * (and resolves: the settlement is recorded by the store either way).
   */
  async release(ticket: Ticket, cost: Nanos, now: number, seq?: number, tokens?: number): Promise<void> {
    const held = this.#held.get(ticket.id) ?? { ticket };
    const numbered = this.#ledger ? seq : undefined;
    held.release = { cost, now, seq: numbered, tokens };
    this.#held.set(ticket.id, held);
    if (numbered !== undefined) this.#unstored.set(numbered, held);
    try {
      const epoch = this.#epoch;
      await this.#releaseSoon(held, epoch);
      // Entered a newer epoch meanwhile: send it there too (counted once per journal number).
      if (numbered !== undefined && this.#epoch !== epoch) await this.#applyReleases([held], this.#epoch);
    } catch (error) {
      log("warn", "redis limiter: release deferred to the heartbeat", {
        ticket: ticket.id,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }

  /**
   * Sends the release with the others of its account made in this turn of the event loop: the
   * settlements of one journal append all release in the same microtask drain, so a script sent
   * after them (a microtask queued by the first) carries them all in one round trip.
   */
  #releaseSoon(held: Held, epoch: number): Promise<void> {
    const slot = `${epoch}:${held.ticket.accountId}`;
    const open = this.#releasing.get(slot);
    if (open && open.helds.length < RELEASES_PER_SCRIPT) {
      open.helds.push(held);
      return open.sent;
    }
    const batch: ReleaseBatch = {
      helds: [held],
      sent: Promise.resolve().then(() => {
        if (this.#releasing.get(slot) === batch) this.#releasing.delete(slot);
        return this.#applyReleases(batch.helds, epoch);
      }),
    };
    this.#releasing.set(slot, batch);
    return batch.sent;
  }

  /**
   * Sends releases of one account in `epoch` in one script: the current epoch (after the epoch
   * check), or one being entered. Applied, they are no longer held.
   */
  async #applyReleases(helds: Held[], epoch: number, checked = true): Promise<void> {
    const first = helds[0];
    if (!first) return;
    const accountId = first.ticket.accountId;
    const keys = this.#keys.account(accountId);
    const scriptKeys = [
      keys.account,
      keys.tickets,
      keys.leases,
      keys.done,
      keys.unstored,
      this.#keys.budgets(accountId),
      this.#keys.budgetReleases(accountId),
    ];
    const args = [String(epoch), this.#offsetMs, String(this.#doneMs), this.#ledger?.journal ?? "", "0"];
    const sent: Held[] = [];
    for (const held of helds) {
      const { ticket, release } = held;
      if (!release) continue;
      sent.push(held);
      // The token windows the ticket holds tokens in (by their index in KEYS), corrected to what it
      // used (when known).
      const windows = release.tokens === undefined ? undefined : ticket.tokenWindows;
      const hashes: number[] = [];
      if (windows?.key) hashes.push(keyIndex(scriptKeys, this.#keys.tokens(accountId, ticket.keyId).h));
      if (windows?.account) hashes.push(keyIndex(scriptKeys, this.#keys.tokens(accountId).h));
      const budgets = ticket.budgets ?? [];
      args.push(
        ticket.id,
        ticket.keyId,
        String(release.cost),
        this.#nowArg(release.now),
        release.seq === undefined ? "" : String(release.seq),
        hashes.length === 0 ? "" : String(release.tokens),
        hashes.join(","),
        String(budgets.length),
      );
      for (const b of budgets) args.push(b.name, String(b.start), String(b.end));
    }
    if (sent.length === 0) return;
    args[4] = String(sent.length);
    const answer = await this.#run(SCRIPTS.release, scriptKeys, args, checked);
    if (answer === -1) {
      this.#checked = false;
      throw new LimiterUnavailableError(
        "Redis holds a newer epoch than this node: the release waits for the check",
      );
    }
    for (const held of sent) this.#held.delete(held.ticket.id);
  }

  /** Held releases grouped by account, at most RELEASES_PER_SCRIPT a group (one script each). */
  #byAccount(helds: Iterable<Held>): Held[][] {
    const groups: Held[][] = [];
    const open = new Map<AccountId, Held[]>();
    for (const held of helds) {
      let group = open.get(held.ticket.accountId);
      if (!group || group.length >= RELEASES_PER_SCRIPT) {
        group = [];
        groups.push(group);
        open.set(held.ticket.accountId, group);
      }
      group.push(held);
    }
    return groups;
  }

  stored(seq: number): void {
    this.#storedSeq = Math.max(this.#storedSeq, seq);
    // Kept in the order released, which is the journal's: stop at the first not stored (one that
    // came out of order goes at a later call, as the stored number only grows).
    for (const stored of this.#unstored.keys()) {
      if (stored > seq) break;
      this.#unstored.delete(stored);
    }
  }

  async peek(
    keyId: KeyId,
    accountId: AccountId,
    rpm: number | null,
    now: number,
    tpm?: { tpm: number | null; accountTpm: number | null },
  ): Promise<RateState> {
    const limits = tpm ?? { tpm: null, accountTpm: null };
    const tokenKeys = this.#tokenKeys(accountId, keyId, limits.tpm, limits.accountTpm);
    const reply = await this.#run(
      SCRIPTS.peek,
      [this.#keys.window(accountId, keyId), ...tokenKeys.flatMap((w) => [w.z, w.h])],
      [
        this.#nowArg(now),
        String(this.#terms.windowMs),
        limits.tpm === null ? "0" : "1",
        limits.accountTpm === null ? "0" : "1",
      ],
    );
    const r = fields(reply, PEEK_REPLY);
    return this.#terms.withTokens(
      this.#terms.rate(rpm, r.count, r.resetMs),
      limits,
      { used: r.keyTokens, resetMs: r.keyTokensResetMs },
      { used: r.accountTokens, resetMs: r.accountTokensResetMs },
    );
  }

  /** The token windows a request with these limits is counted in: the key's, then the account's. */
  #tokenKeys(accountId: AccountId, keyId: KeyId, tpm: number | null, accountTpm: number | null) {
    const windows: { z: string; h: string }[] = [];
    if (tpm !== null) windows.push(this.#keys.tokens(accountId, keyId));
    if (accountTpm !== null) windows.push(this.#keys.tokens(accountId));
    return windows;
  }

  async snapshot(keyId: KeyId, accountId: AccountId, now: number): Promise<LimitSnapshot> {
    let r = await this.#snapshotOnce(keyId, accountId, now);
    if (r.loaded === 0 && this.#ledger) {
      await this.rebase();
      r = await this.#snapshotOnce(keyId, accountId, now);
    }
    return this.#terms.snapshot(r, r.inFlight, r.now);
  }

  async #snapshotOnce(keyId: KeyId, accountId: AccountId, now: number) {
    const keys = this.#keys.account(accountId);
    const reply = await this.#run(
      SCRIPTS.snapshot,
      [keys.account, keys.tickets, keys.leases],
      [String(this.#epoch), keyId, this.#nowArg(now), this.#offsetMs],
    );
    return fields(reply, SNAPSHOT_REPLY);
  }

  async knowsAccount(accountId: AccountId): Promise<boolean> {
    // Attached, the limiter seeds an account itself when a step finds it unseeded.
    if (this.#ledger || this.#known.has(accountId)) return true;
    const seeded = await this.#run(null, [this.#keys.account(accountId).account], []);
    if (seeded === 1) this.#known.add(accountId);
    return seeded === 1;
  }

  /** Seeds one account's balance step by step (epoch 0: a limiter without a ledger; see SET_BALANCE). */
  async setBalance(accountId: AccountId, balance: Nanos, revision: number, credited?: Nanos): Promise<void> {
    await this.#run(
      SCRIPTS.setBalance,
      [this.#keys.account(accountId).account],
      [String(balance), String(revision), credited === undefined ? "" : String(credited)],
    );
    this.#known.add(accountId);
  }

  async setSpent(keyId: KeyId, accountId: AccountId, spent: Nanos, now: number): Promise<void> {
    await this.#run(
      SCRIPTS.setSpent,
      [this.#keys.account(accountId).account],
      [keyId, String(spent), this.#nowArg(now), this.#offsetMs],
    );
  }

  /**
   * Seeds every account from the ledger (attached only): in a new epoch once the barrier passed,
   * and again on every credit and reconciliation, reporting what it corrected. Calls at once share one run.
   */
  rebase(): Promise<void> {
    if (!this.#ledger) return Promise.resolve();
    this.#rebasing ??= this.#rebaseOnce(true)
      .catch((error: unknown) => {
        // Another node began a newer epoch while this one seeded: once more, in that one.
        if (error instanceof EpochMoved) return this.#rebaseOnce(false);
        throw error;
      })
      .finally(() => {
        this.#rebasing = undefined;
      });
    return this.#rebasing;
  }

  async #rebaseOnce(again: boolean): Promise<void> {
    const ledger = this.#ledger;
    if (!ledger) return;
    const started = performance.now();
    await this.#recheck();
    await this.#barrier();
    const epoch = this.#epoch;
    const now = this.now();
    // Read before the snapshot: every commit confirmed by then is in it, unless the database went back.
    const confirmed = this.#storedSeq;
    const figures = await this.#fromLedger(() => ledger.figures(this.#terms.day.start(now)));
    const held = figures.journals.get(ledger.journal) ?? 0;
    if (held < confirmed) {
      // Restored from a backup: Redis counted debits (and credits) the ledger no longer has.
      this.#storedSeq = held;
      await this.#openEpoch(
        "the ledger lost records this node stored (database restored from a backup)",
        epoch,
      );
      if (again) return this.#rebaseOnce(false);
      throw new LimiterUnavailableError("the ledger went back while Redis was rebuilt from it; retry");
    }
    const day = this.#terms.day.index(now);
    const spentOf = new Map<AccountId, { keyId: KeyId; spent: number }[]>();
    for (const key of figures.spent) {
      const list = spentOf.get(key.accountId) ?? [];
      list.push(key);
      spentOf.set(key.accountId, list);
    }
    const outcomes: { accountId: AccountId; outcome: ReturnType<typeof seedOutcome> }[] = [];
    const accounts = [...figures.balances];
    // A bounded number of scripts in flight: Redis serves other nodes' admissions in between.
    for (let i = 0; i < accounts.length; i += SEEDS_IN_FLIGHT) {
      const chunk = accounts.slice(i, i + SEEDS_IN_FLIGHT).map(async ([accountId, balance]) => {
        const keys = this.#keys.account(accountId);
        const reply = await this.#run(
          SCRIPTS.seed,
          [keys.account, keys.tickets, keys.leases, keys.unstored, keys.done],
          seedArgs(epoch, figures, balance, day, spentOf.get(accountId) ?? []),
        );
        return { accountId, outcome: seedOutcome(reply) };
      });
      outcomes.push(...(await Promise.all(chunk)));
    }
    if (outcomes.some((o) => o.outcome === "behind")) {
      this.#checked = false;
      if (again) return this.#rebaseOnce(false);
      throw new LimiterUnavailableError("Redis moved to a newer epoch while this node seeded it");
    }
    this.#report(figures, outcomes, performance.now() - started);
  }

  /** Counts and logs the accounts a seed corrected (figures that differed from the ledger's). */
  #report(
    figures: LedgerFigures,
    outcomes: { accountId: AccountId; outcome: Correction | string }[],
    ms: number,
  ): void {
    this.reconciled.runs++;
    this.reconciled.lastMs = ms;
    for (const { accountId, outcome } of outcomes) {
      if (typeof outcome === "string") continue;
      if (outcome.balance === 0 && outcome.reserved === 0 && outcome.spent === 0) continue;
      this.reconciled.corrected++;
      this.reconciled.balanceNanos += Math.abs(outcome.balance);
      log("info", "redis limiter: reconciled an account with the ledger", {
        account: accountId,
        balance_nanos: outcome.balance,
        reserved_nanos: outcome.reserved,
        spent_nanos: outcome.spent,
        revision: figures.revision,
      });
    }
  }

  /** Tickets this node holds, including settled ones whose release has not reached Redis yet. */
  get held(): number {
    return this.#held.size;
  }

  /** Timed-out acquires whose undoing has not reached Redis yet. */
  get cancelling(): number {
    return this.#cancels.size;
  }

  health(): LimiterHealth {
    return {
      epoch: this.#epoch,
      correctedAccounts: this.reconciled.corrected,
      correctedNanos: this.reconciled.balanceNanos,
    };
  }

  /** The epoch this node works in (0 without a ledger). */
  get epoch(): number {
    return this.#epoch;
  }

  /**
   * Renews the leases of the tickets still open (one script per account) and retries deferred
   * releases and cancels; attached, also checks the epoch, tells the ledger this node is alive, and
   * reconciles when its turn comes. Runs on the heartbeat timer; callable directly (tests, shutdown).
   */
  beat(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#beating ??= this.#beatOnce().finally(() => {
      this.#beating = undefined;
    });
    return this.#beating;
  }

  async #beatOnce(): Promise<void> {
    const results = await Promise.allSettled([this.#keepLeases(), this.#keepEpoch()]);
    const failed = results.find((result) => result.status === "rejected");
    if (failed?.status === "rejected") {
      log("warn", "redis limiter: heartbeat could not reach Redis; leases run out unless renewed in time", {
        error: failed.reason instanceof Error ? failed.reason.message : String(failed.reason),
        leaseMs: this.#leaseMs,
      });
    }
  }

  async #keepLeases(): Promise<void> {
    const byAccount = new Map<AccountId, string[]>();
    const releases: Held[] = [];
    for (const held of this.#held.values()) {
      // A deferred release still holds its reservation in Redis: its lease is renewed too.
      if (held.release) releases.push(held);
      const ids = byAccount.get(held.ticket.accountId) ?? [];
      ids.push(held.ticket.id);
      byAccount.set(held.ticket.accountId, ids);
    }
    const epoch = String(this.#epoch);
    const steps = [...byAccount].map(async ([accountId, ids]) => {
      const keys = this.#keys.account(accountId);
      const renewed = await this.#run(
        SCRIPTS.renew,
        [keys.account, keys.tickets, keys.leases],
        [epoch, String(this.#leaseMs), ...ids],
      );
      if (renewed === -1 && this.#ledger) this.#checked = false;
    });
    const now = Date.now();
    const cancels: Promise<void>[] = [];
    for (const cancel of this.#cancels.values()) {
      if (cancel.until <= now) this.#cancels.delete(cancel.id);
      else cancels.push(this.#applyCancel(cancel));
    }
    const results = await Promise.allSettled([
      ...steps,
      ...this.#byAccount(releases).map((helds) => this.#applyReleases(helds, this.#epoch)),
      ...cancels,
    ]);
    const failed = results.find((result) => result.status === "rejected");
    if (failed?.status === "rejected") throw failed.reason;
  }

  /** Attached: records this node alive, checks the epoch, and reconciles when no other node does. */
  async #keepEpoch(): Promise<void> {
    const ledger = this.#ledger;
    if (!ledger) return;
    await this.#fromLedger(() => ledger.beat(this.#node, this.#leaseMs)).catch((error: unknown) => {
      log("warn", "redis limiter: cannot tell the ledger this node is alive", {
        error: error instanceof Error ? error.message : String(error),
      });
    });
    await this.#recheck();
    const turn = await this.#deadline(
      this.#client.send("SET", [this.#keys.reconciling, this.#node, "NX", "PX", String(this.#reconcileMs)]),
      "SET",
    );
    if (turn === "OK") await this.rebase();
  }

  /** PING within the call deadline (what /readyz reports). */
  async ping(): Promise<void> {
    this.#assertReady();
    await this.#deadline(this.#client.send("PING", []), "PING");
  }

  /**
   * Stops the heartbeat after one last try at the deferred releases, leaves the ledger's list of
   * nodes alive, and closes the connection. Tickets still open are left to their leases.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    await this.#beating;
    await this.#keepLeases().catch(() => undefined);
    const ledger = this.#ledger;
    if (ledger) {
      const left = ledger.leave(this.#node).catch(() => undefined);
      await Promise.race([left, Bun.sleep(LEAVE_WAIT_MS)]);
    }
    this.#stop();
  }

  #stop(): void {
    this.#closed = true;
    clearInterval(this.#heartbeat);
    clearInterval(this.#epochWatch);
    this.#client.close();
  }

  #nowArg(now: number): string {
    return this.#callerClock ? String(now) : "";
  }

  /** Keeps Redis's clock as seen from here: its reading minus this node's clock halfway through the call. */
  #learnClock(redisMs: number, sentAt: number): void {
    this.#clockOffset = redisMs - (sentAt + this.#localClock()) / 2;
  }

  /** Reads Redis's generation (and its clock). */
  async #readEpoch(): Promise<EpochState> {
    const sentAt = this.#localClock();
    const state = epochState(
      await this.#deadline(SCRIPTS.readEpoch.run(this.#client, [this.#keys.epoch], []), "the epoch"),
    );
    this.#learnClock(state.redisMs, sentAt);
    return state;
  }

  /** Resolves once the epoch was checked since the last (re)connection or stale answer. */
  async #current(): Promise<void> {
    if (this.#checked || !this.#ledger) return;
    await this.#recheck();
  }

  /** Checks the epoch now (one check at a time); steps already checked go on meanwhile. */
  #recheck(): Promise<void> {
    this.#assertReady();
    this.#checking ??= this.#check().finally(() => {
      this.#checking = undefined;
    });
    return this.#checking;
  }

  /**
   * Checks Redis's copy belongs to the ledger's current epoch (redis-epoch.ts); opens a new epoch
   * when it does not, and enters the epoch Redis holds when this node is not in it yet.
   */
  async #check(): Promise<void> {
    // Nodes that find a lost copy at once each begin an epoch: the older ones lose, and their
    // nodes enter the newest one instead.
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#checkOnce();
      } catch (error) {
        if (!(error instanceof EpochMoved) || attempt >= CHECK_ATTEMPTS) throw error;
      }
    }
  }

  async #checkOnce(): Promise<void> {
    const ledger = this.#ledger;
    if (!ledger) return;
    // Redis first, then the ledger: an epoch Redis holds was moved in the ledger before it.
    const [state, info] = await Promise.all([
      this.#readEpoch(),
      this.#deadline(this.#client.send("INFO", ["server"]), "INFO"),
    ]);
    const run = runIdOf(info);
    let read = true;
    try {
      this.#identity = await this.#fromLedger(() => ledger.identity(), IDENTITY_WAIT_MS);
    } catch (error) {
      // The ledger is down: the last identity read still tells a lost or foreign copy apart.
      if (!this.#identity) throw error;
      read = false;
    }
    const reason = staleReason(state, run, this.#identity, read);
    if (reason !== undefined && !read) {
      // Only a node that reaches the ledger begins an epoch; this one enters it at its next check.
      throw new LimiterUnavailableError(`${reason}, and the ledger cannot be reached to rebuild it`);
    }
    if (reason !== undefined) await this.#openEpoch(reason, Math.max(state.epoch, this.#identity.epoch), run);
    else if (state.epoch !== this.#epoch) await this.#enter(state.epoch);
    this.#checked = true;
  }

  /** Moves the ledger's epoch past `seen`, begins it in Redis (or the newer one another node began), enters it. */
  async #openEpoch(reason: string, seen: number, knownRun?: string): Promise<void> {
    const ledger = this.#ledger;
    if (!ledger) return;
    const run = knownRun ?? runIdOf(await this.#deadline(this.#client.send("INFO", ["server"]), "INFO"));
    const next = await this.#fromLedger(() => ledger.nextEpoch(seen));
    const identity = this.#identity ?? (await this.#fromLedger(() => ledger.identity()));
    const opened = fields(
      await this.#run(SCRIPTS.openEpoch, [this.#keys.epoch], [String(next), run, identity.ledger], false),
      ["epoch", "since"] as const,
    );
    log(
      "warn",
      "redis limiter: Redis's figures are not the ledger's current copy; rebuilding them from the ledger",
      {
        reason,
        epoch: opened.epoch,
      },
    );
    await this.#enter(opened.epoch);
  }

  /**
   * Enters `epoch`: registers the tickets this node still holds, sends again the releases the
   * ledger may lack, and acknowledges it. Timed-out acquires of the older epoch admitted nothing
   * that counts in this one.
   */
  async #enter(epoch: number): Promise<void> {
    this.#known.clear();
    this.#cancels.clear();
    const open = new Map<AccountId, Ticket[]>();
    for (const held of this.#held.values()) {
      if (held.release) continue;
      const list = open.get(held.ticket.accountId) ?? [];
      list.push(held.ticket);
      open.set(held.ticket.accountId, list);
    }
    const registered = await Promise.all(
      [...open].map(([accountId, tickets]) => {
        const keys = this.#keys.account(accountId);
        const args = [String(epoch), String(this.#leaseMs)];
        // The key travels with the budgets the reservation counts in (REGISTER counts it there again).
        for (const t of tickets)
          args.push(t.id, [t.keyId, ...(t.budgets ?? []).map((b) => b.name)].join("\n"), String(t.reserved));
        return this.#run(
          SCRIPTS.register,
          [keys.account, keys.tickets, keys.leases, keys.unstored, keys.done],
          args,
          false,
        );
      }),
    );
    if (registered.includes(-1)) throw this.#behind();
    await Promise.all(
      this.#byAccount(this.#unstored.values()).map((helds) => this.#applyReleases(helds, epoch, false)),
    );
    const ack = fields(
      await this.#run(SCRIPTS.ackEpoch, [this.#keys.epoch], [String(epoch), this.#node], false),
      ["acked", "redisMs"] as const,
    );
    if (ack.acked !== 1) throw this.#behind();
    this.#epoch = epoch;
    log("info", "redis limiter: entered epoch", {
      epoch,
      tickets: [...open.values()].reduce((n, list) => n + list.length, 0),
      releases: this.#unstored.size,
    });
  }

  #behind(): EpochMoved {
    this.#checked = false;
    return new EpochMoved("Redis moved to a newer epoch while this node entered one; retry");
  }

  /**
   * Waits until every node the ledger sees alive has acknowledged the epoch (it holds their tickets
   * and releases), or a lease has passed since it began (a node that has not by then is gone and its
   * tickets would have expired anyway); an admission waits at most `rebuildWaitMs`, then is 503.
   */
  async #barrier(): Promise<void> {
    const ledger = this.#ledger;
    if (!ledger || this.#barrierEpoch === this.#epoch) return;
    const until = performance.now() + this.#rebuildWaitMs;
    for (;;) {
      const alive = await this.#fromLedger(() => ledger.beat(this.#node, this.#leaseMs), this.#rebuildWaitMs);
      const state = await this.#readEpoch();
      if (state.epoch !== this.#epoch) throw this.#behind();
      const waiting = alive.filter((node) => state.acks.get(node) !== this.#epoch);
      if (waiting.length === 0 || state.redisMs - state.since >= this.#leaseMs) {
        this.#barrierEpoch = this.#epoch;
        return;
      }
      if (performance.now() > until) {
        throw new LimiterUnavailableError(
          `Redis is being rebuilt from the ledger: waiting for ${waiting.length} node(s) to re-register their requests in flight`,
        );
      }
      await Bun.sleep(BARRIER_POLL_MS);
    }
  }

  /**
   * A ledger call within `waitMs`; its failure or silence (PostgreSQL down or cut off too) makes
   * the step unavailable, not an error.
   */
  async #fromLedger<T>(call: () => Promise<T>, waitMs = LEDGER_WAIT_MS): Promise<T> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const silent = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${waitMs} ms`)), waitMs);
    });
    try {
      return await Promise.race([call(), silent]);
    } catch (error) {
      if (error instanceof LimiterUnavailableError) throw error;
      throw new LimiterUnavailableError(
        `the ledger (store) cannot be read to check or rebuild Redis's figures: ${error instanceof Error ? error.message : String(error)}`,
      );
    } finally {
      clearTimeout(timer);
    }
  }

  /** Throws, sending nothing, when the limiter is closed or Redis is not connected. */
  #assertReady(): void {
    if (this.#closed) throw new LimiterUnavailableError("the Redis limiter is closed");
    if (!this.#client.connected) {
      this.#reconnect();
      throw new LimiterUnavailableError(`Redis at ${redacted(this.#url)} is not connected`);
    }
  }

  /**
   * Runs a script (or, with null, HEXISTS of the account's revision) within the deadline, after
   * the epoch check when `checked` (steps of an epoch being entered skip it).
   */
  async #run(script: Script | null, keys: string[], args: string[], checked = true): Promise<unknown> {
    if (checked) await this.#current();
    this.#assertReady();
    const call = script
      ? script.run(this.#client, keys, args)
      : this.#client.send("HEXISTS", [keys[0] ?? "", "rev"]);
    return this.#deadline(call, script ? "a limiter script" : "HEXISTS");
  }

  /** Starts one reconnection attempt in the background (the caller has already failed fast). */
  #reconnect(): void {
    if (this.#connecting || this.#closed) return;
    this.#connecting = this.#client
      .connect()
      .catch(() => undefined)
      .finally(() => {
        this.#connecting = undefined;
      });
  }

  #deadline<T>(call: Promise<T>, what: string): Promise<T> {
    return this.#calls.deadline(call, what);
  }

  /** How often a deadline timer fired late and the call was given a further window (tests, metrics). */
  get lateWindows(): number {
    return this.#calls.lateWindows;
  }
}

/** The index (1-based, as Lua's KEYS) of `key` in `keys`, added at the end when missing. */
function keyIndex(keys: string[], key: string): number {
  const at = keys.indexOf(key);
  if (at >= 0) return at + 1;
  keys.push(key);
  return keys.length;
}

function limitArg(limit: number | null): string {
  return limit === null ? "-1" : String(limit);
}
