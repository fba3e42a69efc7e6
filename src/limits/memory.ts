// The in-memory limiter: one process owns every counter, so each acquire is atomic by construction
// (it runs to completion without yielding). Balances and spent-today are seeded from the store at
// start; after that the hot path touches only these maps.
import { nanos } from "../base/money.ts";
import type { AccountId, KeyId, Nanos } from "../base/types.ts";
import {
  type AcquireRequest,
  type AcquireResult,
  type BudgetSpec,
  type HeldBudget,
  type KeyFigures,
  type Limiter,
  type LimiterOptions,
  type LimitSnapshot,
  LimitTerms,
  type RateState,
  type Refusal,
  type Ticket,
  type TokenFigures,
} from "./limiter.ts";
import { SlidingWindow, TokenWindow } from "./window.ts";

interface KeyState {
  window: SlidingWindow;
  inFlight: number;
  day: number;
  spent: number;
  reserved: number;
  /** The key's token window, made when a token limit first applies. */
  tokens?: TokenWindow;
}

interface AccountState {
  balance: number;
  reserved: number;
  /** False until the store's balance was set: an unknown account has nothing to spend. */
  loaded: boolean;
  tokens?: TokenWindow;
  /** Budgets of the account and its keys by counter name: the period counted, its spending, reservations. */
  budgets?: Map<string, { start: number; spent: number; reserved: number }>;
}

export class MemoryLimiter implements Limiter {
  readonly #keys = new Map<string, KeyState>();
  readonly #accounts = new Map<AccountId, AccountState>();
  readonly #terms: LimitTerms;
  #tickets = 0;
  /** Tickets admitted and not yet released: a release replayed finds none and changes nothing. */
  readonly #open = new Set<string>();

  constructor(options: LimiterOptions = {}) {
    this.#terms = new LimitTerms(options);
  }

  async acquire(request: AcquireRequest): Promise<AcquireResult> {
    for (;;) {
      const result = this.acquireNow(request);
      if (!("unseeded" in result)) return result;
      // A budget with no figure for its period: seeded from the store once, then decided again.
      const { budget, start } = result.unseeded;
      const spent = request.seedBudget ? await request.seedBudget(budget, start) : 0;
      this.#seedBudget(request.accountId, budget.name, start, spent);
    }
  }

  /** Sets a budget's spending in the period from `start`, unless a figure for that period is held. */
  #seedBudget(accountId: AccountId, name: string, start: number, spent: number): void {
    const account = this.#account(accountId);
    account.budgets ??= new Map();
    const budgets = account.budgets;
    const held = budgets.get(name);
    if (!held) budgets.set(name, { start, spent, reserved: 0 });
    else if (held.start !== start) Object.assign(held, { start, spent });
  }

  /**
   * The synchronous core of acquire (no await between check and update); a budget with no figure
   * for its current period is answered `unseeded`, with nothing changed.
   */
  acquireNow(request: AcquireRequest): AcquireResult | { unseeded: { budget: BudgetSpec; start: number } } {
    const { now, reserve } = request;
    const key = this.#key(request.keyId, now);
    const account = this.#account(request.accountId);
    key.window.prune(now);
    const need = request.tokens ?? 0;
    const keyTokens = request.tpm != null ? this.#tokens(key, now) : undefined;
    const accountTokens = request.accountTpm != null ? this.#tokens(account, now) : undefined;
    const rate = (): RateState =>
      this.#terms.withTokens(
        this.#rate(key, request.rpm, now),
        request,
        keyTokens && figuresOf(keyTokens, now),
        accountTokens && figuresOf(accountTokens, now),
      );
    const refuse = (refusal: Refusal, wait?: number, limit?: number): AcquireResult =>
      this.#terms.refuse(refusal, request, figures(key, account), rate(), now, wait, limit);
    if (request.rpm !== null && key.window.count >= request.rpm) {
      return refuse("rate_limit_exceeded");
    }
    for (const [window, limit] of [
      [keyTokens, request.tpm],
      [accountTokens, request.accountTpm],
    ] as const) {
      if (window && limit != null && window.used + need > limit) {
        const wait = window.waitFor(need, limit, now);
        return refuse("token_rate_limit_exceeded", wait < 0 ? undefined : wait, limit);
      }
    }
    if (request.concurrency !== null && key.inFlight >= request.concurrency) {
      return refuse("concurrency_limit_exceeded");
    }
    if (account.reserved + reserve > account.balance) {
      return refuse("insufficient_quota");
    }
    if (request.dailyCap !== null && key.spent + key.reserved + reserve > request.dailyCap) {
      return refuse("daily_quota_exceeded");
    }
    const held: HeldBudget[] = [];
    for (const budget of request.budgets ?? []) {
      const { start, end } = this.#terms.calendar.bounds(budget.period, now);
      const state = account.budgets?.get(budget.name);
      if (!state) return { unseeded: { budget, start } };
      // A figure of a later period (a clock stepped back) is kept, not reset.
      const spent = state.start >= start ? state.spent : 0;
      if (spent + state.reserved + reserve > budget.limit) {
        return this.#terms.refuseBudget(
          budget,
          end,
          { ...state, spent, balance: account.balance },
          rate(),
          now,
        );
      }
      held.push({ name: budget.name, start, end });
    }
    for (const budget of held) {
      const state = account.budgets?.get(budget.name);
      if (!state) continue;
      if (state.start < budget.start) Object.assign(state, { start: budget.start, spent: 0 });
      state.reserved += reserve;
    }
    const id = String(++this.#tickets);
    key.window.add(now);
    keyTokens?.add(id, need, now);
    accountTokens?.add(id, need, now);
    key.inFlight++;
    key.reserved += reserve;
    account.reserved += reserve;
    const ticket: Ticket = { id, keyId: request.keyId, accountId: request.accountId, reserved: reserve };
    if (keyTokens || accountTokens) {
      ticket.tokens = need;
      ticket.tokenWindows = { key: keyTokens !== undefined, account: accountTokens !== undefined };
    }
    if (held.length > 0) ticket.budgets = held;
    this.#open.add(ticket.id);
    return { ok: true, ticket, rate: rate() };
  }

  async release(ticket: Ticket, cost: Nanos, now: number, _seq?: number, tokens?: number): Promise<void> {
    this.releaseNow(ticket, cost, now, tokens);
  }

  releaseNow(ticket: Ticket, cost: Nanos, now: number, tokens?: number): void {
    if (!this.#open.delete(ticket.id)) return;
    const key = this.#key(ticket.keyId, now);
    const account = this.#account(ticket.accountId);
    if (tokens !== undefined) {
      if (ticket.tokenWindows?.key) key.tokens?.correct(ticket.id, tokens);
      if (ticket.tokenWindows?.account) account.tokens?.correct(ticket.id, tokens);
    }
    key.inFlight = Math.max(0, key.inFlight - 1);
    key.reserved -= ticket.reserved;
    account.reserved -= ticket.reserved;
    key.spent += cost;
    account.balance -= cost;
    for (const budget of ticket.budgets ?? []) {
      const state = account.budgets?.get(budget.name);
      if (!state) continue;
      state.reserved -= ticket.reserved;
      // The cost counts in the period of the release: the next one once the admission's has ended.
      const period = now >= budget.end ? budget.end : budget.start;
      if (state.start < period) Object.assign(state, { start: period, spent: 0 });
      if (state.start === period) state.spent += cost;
    }
  }

  /** A budget's figures in the period that contains `now` (the CLI, the admin API). */
  async budget(
    accountId: AccountId,
    budget: BudgetSpec,
    now: number,
  ): Promise<{ spent: Nanos; reserved: Nanos; start: number; end: number } | undefined> {
    const { start, end } = this.#terms.calendar.bounds(budget.period, now);
    const state = this.#accounts.get(accountId)?.budgets?.get(budget.name);
    if (!state) return undefined;
    return {
      spent: nanos(state.start === start ? state.spent : 0),
      reserved: nanos(state.reserved),
      start,
      end,
    };
  }

  async peek(
    keyId: KeyId,
    accountId: AccountId,
    rpm: number | null,
    now: number,
    tpm?: { tpm: number | null; accountTpm: number | null },
  ): Promise<RateState> {
    const key = this.#key(keyId, now);
    key.window.prune(now);
    const rate = this.#rate(key, rpm, now);
    if (!tpm) return rate;
    const account = this.#account(accountId);
    const keyTokens = tpm.tpm !== null ? figuresOf(this.#tokens(key, now), now) : undefined;
    const accountTokens = tpm.accountTpm !== null ? figuresOf(this.#tokens(account, now), now) : undefined;
    return this.#terms.withTokens(rate, tpm, keyTokens, accountTokens);
  }

  /** A key's or account's token window, pruned to `now`. */
  #tokens(holder: { tokens?: TokenWindow }, now: number): TokenWindow {
    holder.tokens ??= new TokenWindow(this.#terms.windowMs);
    holder.tokens.prune(now);
    return holder.tokens;
  }

  async snapshot(keyId: KeyId, accountId: AccountId, now: number): Promise<LimitSnapshot> {
    const key = this.#key(keyId, now);
    return this.#terms.snapshot(figures(key, this.#account(accountId)), key.inFlight, now);
  }

  async knowsAccount(accountId: AccountId): Promise<boolean> {
    return this.#accounts.get(accountId)?.loaded === true;
  }

  /** Always applies: this process is the only one counting, so the store's figure is the truth. */
  async setBalance(
    accountId: AccountId,
    balance: Nanos,
    _revision: number,
    _credited?: Nanos,
  ): Promise<void> {
    const account = this.#account(accountId);
    account.balance = balance;
    account.loaded = true;
  }

  async setSpent(keyId: KeyId, _accountId: AccountId, spent: Nanos, now: number): Promise<void> {
    this.#key(keyId, now).spent = spent;
  }

  /** The key's state, rolled over to the billing day of `now` (spent restarts; reservations stay). */
  #key(keyId: KeyId, now: number): KeyState {
    const day = this.#terms.day.index(now);
    let key = this.#keys.get(keyId);
    if (!key) {
      key = { window: new SlidingWindow(this.#terms.windowMs), inFlight: 0, day, spent: 0, reserved: 0 };
      this.#keys.set(keyId, key);
    } else if (key.day !== day) {
      key.day = day;
      key.spent = 0;
    }
    return key;
  }

  #account(accountId: AccountId): AccountState {
    let account = this.#accounts.get(accountId);
    if (!account) {
      account = { balance: 0, reserved: 0, loaded: false };
      this.#accounts.set(accountId, account);
    }
    return account;
  }

  #rate(key: KeyState, rpm: number | null, now: number): RateState {
    return this.#terms.rate(rpm, key.window.count, key.window.untilOldestLeaves(now));
  }
}

function figuresOf(window: TokenWindow, now: number): TokenFigures {
  return { used: window.used, resetMs: window.untilOldestLeaves(now) };
}

function figures(key: KeyState, account: AccountState): KeyFigures {
  return {
    balance: account.balance,
    accountReserved: account.reserved,
    keyReserved: key.reserved,
    spent: key.spent,
  };
}
