// Keeps the limiter's money figures in step with the store without a query per request: balances
// and spent-today are loaded once at start; afterwards balances are reloaded only when the store's
// revision moves (a credit or a new account made by the CLI or the admin API). A reload runs
// between writer batches and subtracts the debits still queued, so nothing settled is forgotten.
// On a shared limiter (Redis) that already holds an account, a reload applies only the change of
// the account's credit total: overwriting the balance would drop what other nodes released and
// have not stored yet. A limiter that rebuilds itself from the store (Redis on PostgreSQL) is
// asked to do so instead (rebase): it seeds every account, today's spending included, exactly.

import { log } from "../base/log.ts";
import { nanos } from "../base/money.ts";
import type { AccountId } from "../base/types.ts";
import type { Limiter } from "../limits/limiter.ts";
import type { Store } from "../store/store.ts";
import type { UsageRecord } from "../store/usage/record.ts";
import type { GroupCommitWriter } from "./writer.ts";

export class BalanceSync {
  readonly #store: Store;
  readonly #limiter: Limiter;
  readonly #writer: GroupCommitWriter<UsageRecord>;
  #revision = -1;
  #timer: ReturnType<typeof setInterval> | undefined;
  #polling = false;
  /** A poll asked for while one was running (a notification): run once more after it. */
  #again = false;
  #unwatch: (() => Promise<void>) | undefined;
  readonly #rebuilds: boolean;

  constructor(store: Store, limiter: Limiter, writer: GroupCommitWriter<UsageRecord>, rebuilds = false) {
    this.#store = store;
    this.#limiter = limiter;
    this.#writer = writer;
    this.#rebuilds = rebuilds;
  }

  /** Loads balances and what each key spent since `dayStart`, then polls every `pollMs`. */
  async start(dayStart: number, now: number, pollMs: number): Promise<void> {
    this.#revision = await this.#store.revision();
    if (this.#rebuilds) {
      // Another node may be rebuilding Redis now: the first admission seeds then, not this start.
      await this.reload().catch((error: unknown) => {
        log("warn", "the shared limiter is not seeded yet; the first request will seed it", {
          error: error instanceof Error ? error.message : String(error),
        });
      });
    } else {
      await this.reload();
      await this.seedSpent(dayStart, now);
    }
    if (pollMs > 0) {
      this.#timer = setInterval(() => void this.poll(), pollMs);
      this.#timer.unref();
      // A store that notifies (PostgreSQL) makes a credit on any node seen at once; the poll stays.
      this.#unwatch = await this.#store
        .watch?.(() => void this.poll())
        .catch((error: unknown) => {
          log("warn", "balance change notifications unavailable; polling only", {
            error: error instanceof Error ? error.message : String(error),
          });
          return undefined;
        });
    }
  }

  /** Sets each key's spending since `dayStart` (at start, and when a shared limiter lost its data). */
  async seedSpent(dayStart: number, now: number): Promise<void> {
    if (this.#rebuilds) return;
    const owners = new Map<string, AccountId>(
      (await this.#store.listKeys()).map((key) => [key.id, key.accountId]),
    );
    for (const [keyId, spent] of await this.#store.usage.spentByKeySince(dayStart)) {
      const accountId = owners.get(keyId);
      if (accountId !== undefined) await this.#limiter.setSpent(keyId, accountId, spent, now);
    }
  }

  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#unwatch?.().catch(() => undefined);
    this.#unwatch = undefined;
  }

  /** Reloads balances if the store changed since the last look. */
  async poll(): Promise<void> {
    if (this.#polling) {
      this.#again = true;
      return;
    }
    this.#polling = true;
    try {
      const revision = await this.#store.revision();
      if (revision !== this.#revision) {
        this.#revision = revision;
        await this.reload();
      }
    } catch (error) {
      log("warn", "balance reload failed", { error: error instanceof Error ? error.message : String(error) });
    } finally {
      this.#polling = false;
      if (this.#again) {
        this.#again = false;
        void this.poll();
      }
    }
  }

  /**
   * Sets every balance to the stored one minus the debits not yet committed, tagged with the
   * revision and credit totals read in the same snapshot (a shared limiter that holds the account
   * applies only the credits: see Limiter.setBalance).
   */
  reload(): Promise<void> {
    if (this.#rebuilds) return this.#limiter.rebase?.() ?? Promise.resolve();
    return this.#writer.exclusive(async () => {
      const figures = await this.#store.usage.seedFigures();
      const pending = new Map<number, number>();
      for (const record of this.#writer.queued()) {
        pending.set(record.accountId, (pending.get(record.accountId) ?? 0) + record.costNanos);
      }
      // Started without an await in between, so no settlement slips between reading the queue and
      // setting the balances (an in-memory limiter sets them synchronously).
      const updates = [...figures.accounts].map(([accountId, { balance, credited }]) =>
        this.#limiter.setBalance(
          accountId,
          nanos(balance - (pending.get(accountId) ?? 0)),
          figures.revision,
          credited,
        ),
      );
      await Promise.all(updates);
    });
  }
}
