// The store interface: everything the gateway and the CLI persist goes through it. SQLite
// (sqlite.ts) and PostgreSQL (pg.ts) implement it and pass the same contract
// (test/unit/store-contract.ts, run by store-sqlite.test.ts and store-pg.test.ts).

import type { AccountId, KeyId, Nanos } from "../base/types.ts";
import type { LimiterLedger } from "../limits/limiter.ts";
import type { AdminStore } from "./admin.ts";
import type { KeyRecord, KeyStatus } from "./key-record.ts";
import type { Budgets } from "./sqlite/schema.ts";
import type { UsageStore } from "./usage/record.ts";

export type { KeyRecord, KeyStatus };

export interface Account {
  id: AccountId;
  name: string;
  balance: Nanos;
  /** Budgets with periods (nano-USD by period); null = none. */
  budgets: Budgets | null;
  createdAt: number;
}

export interface Group {
  id: number;
  name: string;
  modelPatterns: string[];
}

/** What the gateway loads into memory to authenticate without a query per request. */
export interface AuthKeyRecord extends KeyRecord {
  secretHash: string;
  groupModelPatterns: string[];
}

export interface NewKey {
  id: KeyId;
  account: string;
  group: string;
  name: string;
  prefix: string;
  secretHash: string;
  expiresAt: number | null;
  allowIps: string[] | null;
  dailyCap: Nanos | null;
  rpm: number | null;
  concurrency: number | null;
  tpm: number | null;
  budgets?: Budgets | null;
}

/**
 * A failure of the store that the caller can explain: a name that does not exist, or one taken;
 * at open, a database URL of the wrong form or a database that cannot be reached.
 */
export class StoreError extends Error {
  constructor(
    readonly code: "not_found" | "conflict" | "invalid_url" | "unavailable",
    message: string,
  ) {
    super(message);
    this.name = "StoreError";
  }
}

export interface Store {
  /** Usage records and their ledger debits (the billing writer's part of the store). */
  readonly usage: UsageStore;
  /** The operator's part: admin tokens, audit, key edits, usage reads, notifications. */
  readonly admin: AdminStore;
  /** Applies pending migrations; safe to call on every start. */
  migrate(): Promise<void>;
  /** A number that changes whenever keys, groups or accounts change. Cheap: polled by gateways. */
  revision(): Promise<number>;
  /** True when the store holds no account and no key (a fresh install). */
  isEmpty(): Promise<boolean>;
  /** Throws when the database cannot be reached. */
  ping(): Promise<void>;
  /**
   * Calls `onChange` soon after any process commits a change that moves the revision (PostgreSQL
   * LISTEN/NOTIFY), and after a reconnection; resolves to the function that stops it. Absent on
   * SQLite, where one node polls the revision.
   */
  watch?(onChange: () => void): Promise<() => Promise<void>>;
  /**
   * Registers a serving node on a shared database (PostgreSQL) for its lifetime: nodes that share a
   * limiter (Redis) may be many; a node with its own in-memory limiter must be the only one, since
   * two would each admit against their own balances. Throws StoreError conflict otherwise.
   */
  claimNode?(sharedLimiter: boolean): Promise<void>;
  /**
   * The ledger as a shared limiter (Redis) rebuilds itself from it (PostgreSQL only): a cluster's
   * Redis copy is then checked against the ledger's epoch and rebuilt when it is not current.
   */
  limiterLedger?(): LimiterLedger;
  close(): Promise<void>;

  createAccount(name: string, balance: Nanos): Promise<Account>;
  /** Adds to a balance and records a ledger credit with its note; returns the new balance. */
  creditAccount(name: string, amount: Nanos, note: string): Promise<Account>;
  listAccounts(): Promise<Account[]>;

  /** Creates the group or replaces its model patterns. */
  setGroup(name: string, modelPatterns: string[]): Promise<Group>;
  listGroups(): Promise<Group[]>;

  createKey(key: NewKey): Promise<KeyRecord>;
  listKeys(): Promise<KeyRecord[]>;
  setKeyStatus(id: KeyId, status: KeyStatus): Promise<KeyRecord>;
  /** Every key with its hash and group patterns, for the in-memory auth cache. */
  loadAuthKeys(): Promise<AuthKeyRecord[]>;
  /** Records last-used times in one batch (ms since epoch per key id). */
  touchKeys(lastUsed: ReadonlyMap<KeyId, number>): Promise<void>;
}
