// Shared set-up for the billing unit tests: a migrated in-memory store with one account, a
// principal for a key of it, a manual clock, and a LedgerMeter wired to all of them.
import * as v from "valibot";
import type { Principal } from "../../src/auth/keys.ts";
import { nanos, parseUsd } from "../../src/base/money.ts";
import type { AccountId, Nanos } from "../../src/base/types.ts";
import { type AdmitInput, NO_USAGE, type WorstCase } from "../../src/billing/contract.ts";
import { type UsageEvent, UsageFeed } from "../../src/billing/feed.ts";
import { LedgerMeter } from "../../src/billing/ledger.ts";
import { ModelAllowList } from "../../src/catalog/groups.ts";
import { findModel, type ModelInfo } from "../../src/catalog/models.ts";
import { BillingSchema } from "../../src/config/prices.ts";
import { openSqliteStore, type SqliteStore } from "../../src/store/sqlite/store.ts";
import type { UsageCounts } from "../../src/wire/usage-counts.ts";
import { kid } from "../helpers/ids.ts";

export function usd(text: string): Nanos {
  const parsed = parseUsd(text);
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.value;
}

export function model(id: string): ModelInfo {
  const found = findModel(id);
  if (!found) throw new Error(`no model ${id}`);
  return found;
}

export class ManualClock {
  constructor(public t: number) {}
  readonly now = (): number => this.t;
}

export interface Fixture {
  store: SqliteStore;
  meter: LedgerMeter;
  feed: UsageFeed;
  events: UsageEvent[];
  clock: ManualClock;
  principal: (limits?: Partial<Pick<Principal, "dailyCap" | "rpm" | "concurrency">>) => Principal;
  close: () => Promise<void>;
}

export async function fixture(
  options: { balance?: string; billing?: Record<string, unknown>; at?: string } = {},
): Promise<Fixture> {
  const store = openSqliteStore(":memory:");
  await store.migrate();
  const account = await store.createAccount("acme", usd(options.balance ?? "100"));
  const feed = new UsageFeed();
  const events: UsageEvent[] = [];
  feed.subscribe((e) => events.push(e));
  const clock = new ManualClock(Date.parse(options.at ?? "2026-05-01T12:00:00Z"));
  const billing = v.parse(BillingSchema, options.billing ?? {});
  const meter = new LedgerMeter({ store, feed, billing, now: clock.now, pollMs: 0 });
  await meter.start();
  const principal = (limits: Partial<Pick<Principal, "dailyCap" | "rpm" | "concurrency">> = {}) =>
    principalOf(account, limits);
  return {
    store,
    meter,
    feed,
    events,
    clock,
    principal,
    close: async () => {
      await meter.close();
      await store.close();
    },
  };
}

let counter = 0;

/** The principal of key `key_test` of `account`, with every model and no limit but `limits`. */
export function principalOf(
  account: { id: AccountId; name: string },
  limits: Partial<Pick<Principal, "dailyCap" | "rpm" | "concurrency">> = {},
): Principal {
  return {
    keyId: kid("key_test"),
    keyName: "test",
    accountId: account.id,
    accountName: account.name,
    group: "default",
    models: new ModelAllowList(["*"]),
    dailyCap: null,
    rpm: null,
    concurrency: null,
    tpm: null,
    budgets: null,
    accountBudgets: null,
    ...limits,
  };
}

export function admitInput(principal: Principal, modelId: string, worstCase: WorstCase): AdmitInput {
  counter++;
  return {
    requestId: `req_${counter}_${Math.random().toString(36).slice(2)}`,
    principal,
    model: model(modelId),
    endpoint: worstCase.kind === "image" ? "/v1/images/generations" : "/v1/chat/completions",
    method: "POST",
    stream: false,
    worstCase,
  };
}

export function usage(partial: Partial<UsageCounts>): UsageCounts {
  return { ...NO_USAGE, ...partial };
}

export const ZERO = nanos(0);
