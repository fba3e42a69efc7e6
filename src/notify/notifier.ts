// Watches for notification events and hands them to the dispatcher: balances under a threshold
// and daily caps at 80% / 100% (checked shortly after traffic, off the request path), refused
// known keys (from the key cache, rate-limited), and operator announcements.

import type { KeyCache, KeyRefusal } from "../auth/keys.ts";
import { log } from "../base/log.ts";
import { formatUsd, parseUsd } from "../base/money.ts";
import { isObject, type Obj } from "../base/plain-object.ts";
import { startOfUtcDay, utcDay } from "../base/time.ts";
import type { AccountId } from "../base/types.ts";
import type { UsageFeed } from "../billing/feed.ts";
import type { NotificationsConfig } from "../config/admin.ts";
import { BUDGET_PERIODS, BudgetCalendar } from "../limits/periods.ts";
import type { NotificationChannel } from "../store/admin.ts";
import type { Budgets } from "../store/sqlite/schema.ts";
import type { Account, KeyRecord, Store } from "../store/store.ts";
import { Dispatcher } from "./dispatcher.ts";
import { EmailSender } from "./email.ts";
import { AlertLimiter } from "./limiter.ts";
import { type AccountRef, type EventKind, type Notification, notification } from "./payloads.ts";

export interface NotifierOptions {
  /** The clock of the alert rate limiter (tests move it instead of waiting). */
  now?: () => number;
  /** How the dispatcher waits between retries (tests record the backoff instead of sleeping). */
  sleep?: (ms: number) => Promise<void>;
  /** Where the SMTP password variable is read from. */
  env?: Readonly<Record<string, string | undefined>>;
  /** The budget periods' calendar and the percentages notified (`[billing.budgets]`). */
  budgets?: { calendar: BudgetCalendar; levels: readonly number[] };
}

export class Notifier {
  readonly #store: Store;
  readonly #config: NotificationsConfig;
  readonly #email: EmailSender | undefined;
  readonly dispatcher: Dispatcher;
  readonly #limiter: AlertLimiter;
  readonly #defaultThreshold: number;
  readonly #budgets: { calendar: BudgetCalendar; levels: readonly number[] };
  /** Accounts with traffic or credits since the last check. */
  #dirty = new Set<number>();
  /** Conditions already notified: `balance:<channel>`, `cap:<key>:<day>:<level>`. */
  readonly #fired = new Set<string>();
  #timer: ReturnType<typeof setInterval> | undefined;
  #checking: Promise<void> | undefined;
  #unsubscribe: (() => void) | undefined;
  /** The budget thresholds notified before this process started, read once from the deliveries. */
  #budgetMarksLoaded: Promise<void> | undefined;
  /** Security alerts between the refusal and the hand-off to the dispatcher. */
  readonly #alerts = new Set<Promise<void>>();

  constructor(store: Store, config: NotificationsConfig, options: NotifierOptions = {}) {
    this.#store = store;
    this.#config = config;
    this.#email = config.smtp ? new EmailSender(config.smtp, options.env) : undefined;
    this.dispatcher = new Dispatcher(store.admin, config, this.#email, options.sleep);
    this.#limiter = new AlertLimiter(config.alert_interval_seconds * 1000, options.now);
    this.#budgets = options.budgets ?? {
      calendar: new BudgetCalendar({ timeZone: "UTC" }),
      levels: [80, 100],
    };
    const threshold = parseUsd(config.balance_threshold_usd);
    this.#defaultThreshold = threshold.ok ? threshold.value : 0;
  }

  /**
   * Subscribes to the feed and the key cache, and checks dirty accounts periodically. A cluster
   * primary has no key cache: its workers forward their refusals to keyRefused().
   */
  start(feed: UsageFeed, keys?: KeyCache): void {
    this.#unsubscribe = feed.subscribe((event) => {
      if (!event.unbilled) this.#dirty.add(event.accountId);
    });
    if (keys) keys.onRefused = (refusal) => this.keyRefused(refusal);
    this.#timer = setInterval(() => void this.check(), this.#config.check_interval_ms);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    this.#unsubscribe?.();
    if (this.#timer) clearInterval(this.#timer);
    await this.#checking;
    this.#email?.close();
  }

  /** A balance changed outside traffic (a credit): re-check it soon. */
  balanceChanged(accountId: AccountId): void {
    this.#dirty.add(accountId);
  }

  /** Checks balances and daily caps of the accounts that had traffic since the last check. */
  async check(): Promise<void> {
    if (this.#checking || this.#dirty.size === 0) return this.#checking;
    const ids = this.#dirty;
    this.#dirty = new Set();
    this.#checking = this.#checkAccounts(ids)
      .catch((error: unknown) =>
        log("error", "notification check failed", {
          error: error instanceof Error ? error.message : String(error),
        }),
      )
      .finally(() => {
        this.#checking = undefined;
      });
    return this.#checking;
  }

  async #checkAccounts(ids: Set<number>): Promise<void> {
    const channels = (await this.#store.admin.listChannels()).filter((c) => c.enabled);
    if (channels.length === 0) return;
    const accounts = (await this.#store.listAccounts()).filter((a) => ids.has(a.id));
    for (const account of accounts) this.#checkBalance(account, channels);
    const today = startOfUtcDay();
    const { byKey } = await this.#store.admin.spending(today);
    const listed = (await this.#store.listKeys()).filter((k) => ids.has(k.accountId));
    await this.#checkBudgets(channels, accounts, listed);
    const keys = listed.filter((k) => k.dailyCap !== null);
    for (const key of keys) {
      const cap = key.dailyCap ?? 0;
      const spent = byKey.get(key.id) ?? 0;
      for (const level of [80, 100] as const) {
        const mark = `cap:${key.id}:${utcDay(today)}:${level}`;
        if (cap <= 0 || spent * 100 < cap * level || this.#fired.has(mark)) continue;
        this.#fired.add(mark);
        const ref = { id: key.accountId, name: key.account };
        this.#emit(channels, "quota.daily_cap", ref, {
          key_id: key.id,
          key_name: key.name,
          level,
          spent_today_nanos: spent,
          daily_cap_nanos: cap,
          day: utcDay(today),
        });
      }
    }
  }

  /**
   * Budgets of the accounts checked and of their keys: each threshold crossed in a period is
   * notified once in that period (spent from the store's records since the period's start), across
   * restarts too (the thresholds already sent are read back from the deliveries).
   */
  async #checkBudgets(
    channels: NotificationChannel[],
    accounts: Account[],
    keys: KeyRecord[],
  ): Promise<void> {
    const owners: { account: AccountRef; key: KeyRecord | null; budgets: Budgets }[] = [];
    for (const account of accounts)
      if (account.budgets) owners.push({ account: ref(account), key: null, budgets: account.budgets });
    for (const key of keys) {
      if (key.budgets)
        owners.push({ account: { id: key.accountId, name: key.account }, key, budgets: key.budgets });
    }
    if (owners.length === 0) return;
    this.#budgetMarksLoaded ??= this.#loadBudgetMarks();
    await this.#budgetMarksLoaded;
    const now = Date.now();
    const spending = new Map<number, Awaited<ReturnType<Store["admin"]["spending"]>>>();
    for (const { account, key, budgets } of owners) {
      for (const period of BUDGET_PERIODS) {
        const limit = budgets[period];
        if (limit === undefined || limit <= 0) continue;
        const { start, end } = this.#budgets.calendar.bounds(period, now);
        let spent = spending.get(start);
        if (!spent) {
          spent = await this.#store.admin.spending(start);
          spending.set(start, spent);
        }
        const used = (key === null ? spent.byAccount.get(account.id) : spent.byKey.get(key.id)) ?? 0;
        const owner = key === null ? `a:${account.id}` : `k:${key.id}`;
        // The highest threshold crossed: one notification per level and period.
        for (const level of this.#budgets.levels) {
          const mark = budgetMark(owner, period, start, level);
          if (used * 100 < limit * level || this.#fired.has(mark)) continue;
          this.#fired.add(mark);
          this.#emit(channels, "quota.budget", account, {
            key_id: key?.id ?? null,
            key_name: key?.name ?? null,
            period,
            level,
            spent_nanos: used,
            budget_nanos: limit,
            period_start: new Date(start).toISOString(),
            period_end: period === "total" ? null : new Date(end).toISOString(),
          });
        }
      }
    }
  }

  /**
   * Marks the budget thresholds already notified, from the stored deliveries of `quota.budget`, so
   * a restart does not notify a threshold again in the same period ("once per period" holds across
   * restarts; the deliveries are what was sent).
   */
  async #loadBudgetMarks(): Promise<void> {
    const deliveries = await this.#store.admin.listDeliveries(BUDGET_MARKS_READ);
    for (const delivery of deliveries) {
      if (delivery.event !== "quota.budget") continue;
      const mark = budgetMarkOf(delivery.payload);
      if (mark !== undefined) this.#fired.add(mark);
    }
  }

  #checkBalance(account: Account, channels: NotificationChannel[]): void {
    for (const channel of channels) {
      if (!reaches(channel, "balance.low", account.id)) continue;
      const threshold = channel.balanceThreshold ?? this.#defaultThreshold;
      const mark = `balance:${channel.id}:${account.id}`;
      if (account.balance >= threshold) {
        this.#fired.delete(mark); // re-armed: the next fall under the threshold notifies again
        continue;
      }
      if (this.#fired.has(mark)) continue;
      this.#fired.add(mark);
      const n = notification("balance.low", ref(account), {
        balance_nanos: account.balance,
        balance_usd: formatUsd(account.balance),
        threshold_nanos: threshold,
        threshold_usd: formatUsd(threshold),
      });
      this.dispatcher.send(channel, n);
    }
  }

  /** A known key was refused (revoked, expired, outside its allowlist): alert, rate-limited. */
  keyRefused(refusal: KeyRefusal): void {
    const { send, suppressed } = this.#limiter.take(`${refusal.keyId}:${refusal.reason}`);
    if (!send) return;
    const task = this.#store.admin
      .listChannels()
      .then((channels) =>
        this.#emit(
          channels.filter((c) => c.enabled),
          "key.security_alert",
          { id: refusal.accountId, name: refusal.accountName },
          {
            reason: refusal.reason,
            key_id: refusal.keyId,
            key_name: refusal.keyName,
            key_prefix: refusal.keyPrefix,
            client_address: refusal.client,
            suppressed,
          },
        ),
      )
      .catch((error: unknown) =>
        log("error", "security alert failed", {
          error: error instanceof Error ? error.message : String(error),
        }),
      );
    this.#alerts.add(task);
    void task.finally(() => this.#alerts.delete(task));
  }

  /** Resolves when every check, alert and delivery started so far has finished (or finally failed). */
  async idle(): Promise<void> {
    await this.#checking;
    while (this.#alerts.size > 0) await Promise.all([...this.#alerts]);
    await this.dispatcher.idle();
  }

  /** Sends an announcement to every channel subscribed to it (of one account, or all). */
  async announce(
    title: string,
    message: string,
    account: Account | null,
  ): Promise<{ id: string; deliveries: string[] }> {
    const channels = (await this.#store.admin.listChannels()).filter(
      (c) =>
        c.enabled &&
        c.events.includes("announcement") &&
        (account === null || c.accountId === null || c.accountId === account.id),
    );
    const n = notification("announcement", account ? ref(account) : null, { title, message });
    return { id: n.id, deliveries: channels.map((c) => this.dispatcher.send(c, n)) };
  }

  #emit<K extends EventKind>(
    channels: NotificationChannel[],
    type: K,
    account: AccountRef,
    data: Notification<K>["data"],
  ): void {
    const n = notification(type, account, data);
    for (const channel of channels) {
      if (reaches(channel, type, account.id)) this.dispatcher.send(channel, n);
    }
  }
}

function ref(account: Account): AccountRef {
  return { id: account.id, name: account.name };
}

/** Whether a channel receives this kind of event about this account. */
function reaches(channel: NotificationChannel, type: EventKind, accountId: AccountId): boolean {
  return channel.events.includes(type) && (channel.accountId === null || channel.accountId === accountId);
}

/** How many recent deliveries a starting notifier reads for the budget thresholds already sent. */
const BUDGET_MARKS_READ = 10_000;

/** The mark of one budget threshold in one period of one owner (`a:<account>` or `k:<key>`). */
function budgetMark(owner: string, period: string, start: number, level: number): string {
  return `budget:${owner}:${period}:${start}:${level}`;
}

/** The mark a stored `quota.budget` notification stands for, or undefined when it is not one. */
function budgetMarkOf(payload: Obj): string | undefined {
  const { data, account } = payload;
  if (!isObject(data)) return undefined;
  const { key_id, period, level, period_start } = data;
  const accountId = isObject(account) ? account.id : undefined;
  const owner =
    typeof key_id === "string" ? `k:${key_id}` : typeof accountId === "number" ? `a:${accountId}` : undefined;
  const start = typeof period_start === "string" ? Date.parse(period_start) : Number.NaN;
  if (owner === undefined || typeof period !== "string" || typeof level !== "number" || Number.isNaN(start))
    return undefined;
  return budgetMark(owner, period, start, level);
}
