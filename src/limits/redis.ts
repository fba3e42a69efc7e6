// The Redis limiter: the Limiter contract for several gateway nodes sharing one Redis. Each
// admission and each release is one atomic Lua script (redis-scripts.ts), so nodes admitting at once
// can never over-admit the RPM window, the concurrency slots or the money.
//
// Time: by default every decision uses Redis's clock (TIME inside the script), and the `now`
// arguments of the interface are ignored, so node clocks do not matter. With `clock: "caller"` the
// RPM window and the billing day use the `now` passed in (the contract tests' clock); lease expiry
// always uses Redis time.
//
// Leases: a concurrency slot and its reservation are held under a lease that this node's heartbeat
// renews while the ticket is open. A node that stops (crash, SIGKILL, partition) stops renewing; the
// next script touching the account frees its slots and reservations once the lease ran out.
//
// Failure policy: every call has a deadline (`timeoutMs`); a Redis that is down or slower than that
// makes acquire/peek/snapshot/knowsAccount throw LimiterUnavailableError (the gateway answers 503
// `limiter_unavailable`). There is no offline queue and no local fallback. A release that fails is
// kept and retried by the heartbeat until Redis takes it (releases are idempotent by ticket id). An
// acquire we stopped waiting for may still run in Redis: it is cancelled by ticket id (now, then by
// the heartbeat), which frees whatever it admitted and makes it refuse if it runs later still.
import { RedisClient } from "bun";
import { log } from "../log.ts";
import type { Nanos } from "../types.ts";
import {
  type AcquireRequest,
  type AcquireResult,
  type Limiter,
  type LimiterOptions,
  LimiterUnavailableError,
  type LimitSnapshot,
  LimitTerms,
  type RateState,
  type Refusal,
  type Ticket,
} from "./limiter.ts";
import { RedisKeys } from "./redis-keys.ts";
import { SCRIPTS, type Script } from "./redis-scripts.ts";

/** The default deadline of one Redis call (`redis.timeout_ms`), inside the 250 ms the failure policy allows. */
export const REDIS_TIMEOUT_MS = 200;
/** A deadline timer firing this much later than due means the event loop, not Redis, was busy. */
const LAG_TOLERANCE_MS = 20;
/** Further windows a call gets when its timer fired late (each again only if that one was late too). */
const LATE_WINDOWS = 4;

const REFUSALS: Record<number, Refusal> = {
  1: "rate_limit_exceeded",
  2: "concurrency_limit_exceeded",
  3: "insufficient_quota",
  4: "daily_quota_exceeded",
};

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
  "loaded",
] as const;
const SNAPSHOT_REPLY = ["balance", "accountReserved", "keyReserved", "inFlight", "spent", "now"] as const;

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
  /** How long a released ticket id is remembered so a replayed release changes nothing (default 10 min). */
  doneMs?: number;
  /** Whose clock decides windows and days: Redis's (default) or the `now` arguments. */
  clock?: "redis" | "caller";
}

/** An acquire this node gave up waiting for, to be undone in Redis in case it ran there. */
interface Cancel {
  id: string;
  accountId: number;
  /** The key's RPM window (the admission, if made, is taken out of it). */
  window: string;
  /**
   * Local time after which the heartbeat stops trying: by then the admission's lease has run out
   * and the next script on the account frees its slot anyway (this bounds the map while Redis hangs).
   */
  until: number;
}

interface Held {
  ticket: Ticket;
  /** Set once settled: the release still has to reach Redis. */
  release?: { cost: Nanos; now: number };
}

export class RedisLimiter implements Limiter {
  readonly #client: RedisClient;
  readonly #keys: RedisKeys;
  readonly #terms: LimitTerms;
  readonly #offsetMs: string;
  readonly #leaseMs: number;
  readonly #timeoutMs: number;
  readonly #doneMs: number;
  readonly #callerClock: boolean;
  readonly #url: string;
  /** Tickets this node holds (renewed by the heartbeat) and releases not yet applied. */
  readonly #held = new Map<string, Held>();
  /** Timed-out acquires not yet undone in Redis (see #cancel). */
  readonly #cancels = new Map<string, Cancel>();
  /** Accounts seen seeded in Redis: knowsAccount answers from here without a round trip. */
  readonly #known = new Set<number>();
  readonly #heartbeat: ReturnType<typeof setInterval>;
  #connecting: Promise<void> | undefined;
  /** The heartbeat running now: a second call (the timer, close) waits for it instead of overlapping. */
  #beating: Promise<void> | undefined;
  #closed = false;
  #lateWindows = 0;

  private constructor(client: RedisClient, options: RedisLimiterOptions) {
    this.#client = client;
    this.#url = options.url;
    this.#keys = new RedisKeys(options.prefix);
    this.#terms = new LimitTerms(options);
    this.#offsetMs = String(this.#terms.dayOffsetMs);
    this.#leaseMs = options.leaseMs ?? 15_000;
    this.#timeoutMs = options.timeoutMs ?? REDIS_TIMEOUT_MS;
    this.#doneMs = options.doneMs ?? 600_000;
    this.#callerClock = options.clock === "caller";
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
    } catch (error) {
      limiter.#stop();
      throw error;
    }
    return limiter;
  }

  get prefix(): string {
    return this.#keys.prefix;
  }

  async acquire(request: AcquireRequest): Promise<AcquireResult> {
    const { accountId, keyId } = request;
    const keys = this.#keys.account(accountId);
    const id = crypto.randomUUID();
    const window = this.#keys.window(accountId, keyId);
    this.#assertReady();
    const sent = SCRIPTS.acquire.run(
      this.#client,
      [keys.account, keys.tickets, keys.leases, window, keys.done],
      [
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
      ],
    );
    let reply: unknown;
    try {
      reply = await this.#deadline(sent, "a limiter script");
    } catch (error) {
      // Redis may still run the script after we gave up (too slow, or the connection dropped after
      // sending): undo it, or the slot and reservation would stay held until the lease runs out.
      this.#cancel({ id, accountId, window, until: Date.now() + this.#leaseMs });
      throw error;
    }
    const r = fields(reply, ACQUIRE_REPLY);
    if (r.loaded === 1) this.#known.add(accountId);
    else this.#known.delete(accountId);
    const rate = this.#terms.rate(request.rpm, r.count, r.resetMs);
    if (r.admitted === 1) {
      const ticket: Ticket = { id, keyId, accountId, reserved: request.reserve };
      this.#held.set(id, { ticket });
      return { ok: true, ticket, rate };
    }
    const refusal = REFUSALS[r.refusal];
    if (refusal === undefined)
      throw new Error(`redis limiter: the acquire script answered refusal ${r.refusal}`);
    return this.#terms.refuse(refusal, request, r, rate, r.now);
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
      [keys.account, keys.tickets, keys.leases, keys.done, cancel.window],
      [cancel.id, String(this.#doneMs)],
    );
    this.#cancels.delete(cancel.id);
  }

  /**
   * Applies the release in Redis; when Redis cannot take it now, keeps it for the heartbeat to retry
   * (and resolves: the settlement is recorded by the store either way).
   */
  async release(ticket: Ticket, cost: Nanos, now: number): Promise<void> {
    const held = this.#held.get(ticket.id) ?? { ticket };
    held.release = { cost, now };
    this.#held.set(ticket.id, held);
    try {
      await this.#applyRelease(held);
    } catch (error) {
      log("warn", "redis limiter: release deferred to the heartbeat", {
        ticket: ticket.id,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }

  async #applyRelease(held: Held): Promise<void> {
    const { ticket, release } = held;
    if (!release) return;
    const keys = this.#keys.account(ticket.accountId);
    await this.#run(
      SCRIPTS.release,
      [keys.account, keys.tickets, keys.leases, keys.done],
      [
        ticket.id,
        ticket.keyId,
        String(release.cost),
        this.#nowArg(release.now),
        this.#offsetMs,
        String(this.#doneMs),
      ],
    );
    this.#held.delete(ticket.id);
  }

  async peek(keyId: string, accountId: number, rpm: number | null, now: number): Promise<RateState> {
    const reply = await this.#run(
      SCRIPTS.peek,
      [this.#keys.window(accountId, keyId)],
      [this.#nowArg(now), String(this.#terms.windowMs)],
    );
    const { count, resetMs } = fields(reply, ["count", "resetMs"] as const);
    return this.#terms.rate(rpm, count, resetMs);
  }

  async snapshot(keyId: string, accountId: number, now: number): Promise<LimitSnapshot> {
    const keys = this.#keys.account(accountId);
    const reply = await this.#run(
      SCRIPTS.snapshot,
      [keys.account, keys.tickets, keys.leases],
      [keyId, this.#nowArg(now), this.#offsetMs],
    );
    const r = fields(reply, SNAPSHOT_REPLY);
    return this.#terms.snapshot(r, r.inFlight, r.now);
  }

  async knowsAccount(accountId: number): Promise<boolean> {
    if (this.#known.has(accountId)) return true;
    const seeded = await this.#run(null, [this.#keys.account(accountId).account], []);
    if (seeded === 1) this.#known.add(accountId);
    return seeded === 1;
  }

  async setBalance(accountId: number, balance: Nanos, revision: number, credited?: Nanos): Promise<void> {
    await this.#run(
      SCRIPTS.setBalance,
      [this.#keys.account(accountId).account],
      [String(balance), String(revision), credited === undefined ? "" : String(credited)],
    );
    this.#known.add(accountId);
  }

  async setSpent(keyId: string, accountId: number, spent: Nanos, now: number): Promise<void> {
    await this.#run(
      SCRIPTS.setSpent,
      [this.#keys.account(accountId).account],
      [keyId, String(spent), this.#nowArg(now), this.#offsetMs],
    );
  }

  /** Tickets this node holds, including settled ones whose release has not reached Redis yet. */
  get held(): number {
    return this.#held.size;
  }

  /** Timed-out acquires whose undoing has not reached Redis yet. */
  get cancelling(): number {
    return this.#cancels.size;
  }

  /**
   * Renews the leases of the tickets still open (one script per account) and retries deferred
   * releases and cancels. Runs on the heartbeat timer; callable directly (tests, shutdown).
   */
  beat(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#beating ??= this.#beatOnce().finally(() => {
      this.#beating = undefined;
    });
    return this.#beating;
  }

  async #beatOnce(): Promise<void> {
    const byAccount = new Map<number, string[]>();
    const releases: Held[] = [];
    for (const held of this.#held.values()) {
      // A deferred release still holds its reservation in Redis: its lease is renewed too.
      if (held.release) releases.push(held);
      const ids = byAccount.get(held.ticket.accountId) ?? [];
      ids.push(held.ticket.id);
      byAccount.set(held.ticket.accountId, ids);
    }
    const steps = [...byAccount].map(([accountId, ids]) => {
      const keys = this.#keys.account(accountId);
      return this.#run(
        SCRIPTS.renew,
        [keys.account, keys.tickets, keys.leases],
        [String(this.#leaseMs), ...ids],
      );
    });
    const now = Date.now();
    const cancels: Promise<void>[] = [];
    for (const cancel of this.#cancels.values()) {
      if (cancel.until <= now) this.#cancels.delete(cancel.id);
      else cancels.push(this.#applyCancel(cancel));
    }
    const results = await Promise.allSettled([
      ...steps,
      ...releases.map((held) => this.#applyRelease(held)),
      ...cancels,
    ]);
    const failed = results.find((result) => result.status === "rejected");
    if (failed?.status === "rejected") {
      log("warn", "redis limiter: heartbeat could not reach Redis; leases run out unless renewed in time", {
        error: failed.reason instanceof Error ? failed.reason.message : String(failed.reason),
        leaseMs: this.#leaseMs,
      });
    }
  }

  /** PING within the call deadline (what /readyz reports). */
  async ping(): Promise<void> {
    this.#assertReady();
    await this.#deadline(this.#client.send("PING", []), "PING");
  }

  /**
   * Stops the heartbeat after one last try at the deferred releases, and closes the connection.
   * Tickets still open are left to their leases.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    await this.#beating;
    await this.beat();
    this.#stop();
  }

  #stop(): void {
    this.#closed = true;
    clearInterval(this.#heartbeat);
    this.#client.close();
  }

  #nowArg(now: number): string {
    return this.#callerClock ? String(now) : "";
  }

  /** Throws, sending nothing, when the limiter is closed or Redis is not connected. */
  #assertReady(): void {
    if (this.#closed) throw new LimiterUnavailableError("the Redis limiter is closed");
    if (!this.#client.connected) {
      this.#reconnect();
      throw new LimiterUnavailableError(`Redis at ${redacted(this.#url)} is not connected`);
    }
  }

  /** Runs a script (or, with null, HEXISTS of the account's revision) within the deadline. */
  async #run(script: Script | null, keys: string[], args: string[]): Promise<unknown> {
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

  /**
   * Races `call` against the deadline. The deadline measures Redis, not this node's event loop: a
   * timer that fires late (the loop was busy, e.g. a long synchronous task or a CPU-starved host)
   * first lets the loop read what arrived meanwhile (setImmediate runs after the I/O poll), and if
   * the answer is still missing grants a further window, up to LATE_WINDOWS times. On a healthy
   * loop the timer fires on time and a hung Redis is refused at `timeoutMs`.
   */
  async #deadline<T>(call: Promise<T>, what: string): Promise<T> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let turn: ReturnType<typeof setImmediate> | undefined;
    const late = new Promise<never>((_, reject) => {
      const arm = (ms: number, windows: number): void => {
        const due = performance.now() + ms;
        timer = setTimeout(() => {
          const lagMs = performance.now() - due;
          turn = setImmediate(() => {
            if (lagMs > LAG_TOLERANCE_MS && windows < LATE_WINDOWS) {
              this.#lateWindows++;
              arm(Math.max(LAG_TOLERANCE_MS, Math.min(this.#timeoutMs, lagMs)), windows + 1);
              return;
            }
            reject(
              new LimiterUnavailableError(
                `Redis at ${redacted(this.#url)} did not answer ${what} within ${this.#timeoutMs} ms`,
              ),
            );
          });
        }, ms);
      };
      arm(this.#timeoutMs, 0);
    });
    try {
      return await Promise.race([call, late]);
    } catch (error) {
      if (error instanceof LimiterUnavailableError) throw error;
      if (error instanceof Error && isConnectionError(error)) {
        throw new LimiterUnavailableError(`Redis at ${redacted(this.#url)} is unreachable: ${error.message}`);
      }
      throw error;
    } finally {
      clearTimeout(timer);
      if (turn) clearImmediate(turn);
    }
  }

  /** How often a deadline timer fired late and the call was given a further window (tests, metrics). */
  get lateWindows(): number {
    return this.#lateWindows;
  }
}

function limitArg(limit: number | null): string {
  return limit === null ? "-1" : String(limit);
}

/** A script reply's integers by name; any other shape is a bug in the script, reported as such. */
function fields<const K extends readonly string[]>(reply: unknown, names: K): Record<K[number], number> {
  if (!Array.isArray(reply) || reply.length !== names.length || !reply.every((v) => typeof v === "number")) {
    throw new Error(
      `redis limiter: expected ${names.length} integers from a script, got ${JSON.stringify(reply)}`,
    );
  }
  const out: Record<string, number> = {};
  names.forEach((name, i) => {
    out[name] = reply[i] ?? 0;
  });
  return out as Record<K[number], number>;
}

function isConnectionError(error: Error): boolean {
  const code = (error as Error & { code?: unknown }).code;
  return typeof code === "string" && code.startsWith("ERR_REDIS_") && code !== "ERR_REDIS_SERVER_ERROR";
}

/** The URL without its password, for messages and logs. */
function redacted(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(unparsable url)";
  }
}
