import type { AccountId, KeyId } from "../base/types.ts";
// Key names of the Redis limiter. Every key of one account carries the `{acct:N}` hash tag, so an
// account's state sits in one hash slot and each script touches one slot (Redis Cluster can serve
// it). The prefix separates clusters (and tests) sharing one Redis.

export interface AccountKeys {
  /** Hash: balance, reservations, revision and the per-key counters. */
  account: string;
  /** Hash: open tickets. */
  tickets: string;
  /** Sorted set: ticket leases by expiry. */
  leases: string;
  /** Sorted set: cancelled ticket ids by time. */
  done: string;
  /** Hash: debits released since the last seed that the ledger may not hold yet. */
  unstored: string;
}

export class RedisKeys {
  readonly prefix: string;

  constructor(prefix: string) {
    if (prefix === "" || /[{}*?[\]\s]/.test(prefix)) {
      throw new Error(
        `redis prefix "${prefix}" must be non-empty without braces, wildcards or spaces (e.g. "modelgate")`,
      );
    }
    this.prefix = prefix;
  }

  account(accountId: AccountId): AccountKeys {
    const base = `${this.prefix}:{acct:${accountId}}`;
    return {
      account: `${base}:a`,
      tickets: `${base}:t`,
      leases: `${base}:l`,
      done: `${base}:d`,
      unstored: `${base}:u`,
    };
  }

  /** Sorted set: the key's admissions in the RPM window (in its account's slot). */
  window(accountId: AccountId, keyId: KeyId): string {
    return `${this.prefix}:{acct:${accountId}}:w:${keyId}`;
  }

  /**
   * A token window (zset of admissions, hash of their tokens and `sum`): the key's, or with no
   * key the account's (in the account's slot).
   */
  tokens(accountId: AccountId, keyId?: KeyId): { z: string; h: string } {
    const base = `${this.prefix}:{acct:${accountId}}`;
    const which = keyId === undefined ? "a" : `k:${keyId}`;
    return { z: `${base}:tz:${which}`, h: `${base}:th:${which}` };
  }

  /** Hash: the periods and spending of the budgets of the account and its keys (outside the epoch). */
  budgets(accountId: AccountId): string {
    return `${this.prefix}:{acct:${accountId}}:b`;
  }

  /**
   * Sorted set: the numbered releases counted in the budgets ("<journal>|<seq>", scored by Redis ms),
   * kept beside them (outside the epoch) so one sent again is not counted twice.
   */
  budgetReleases(accountId: AccountId): string {
    return `${this.prefix}:{acct:${accountId}}:bc`;
  }

  /** Hash: the generation (epoch) Redis's copy belongs to and the nodes that acknowledged it. */
  get epoch(): string {
    return `${this.prefix}:epoch`;
  }

  /** String: held by the node reconciling the accounts now (one at a time per period). */
  get reconciling(): string {
    return `${this.prefix}:reconciling`;
  }

  /** The SCAN pattern matching every key under the prefix. */
  get pattern(): string {
    return `${this.prefix}:*`;
  }
}
