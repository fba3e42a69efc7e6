// Budget periods: where the daily, weekly and monthly budgets of a key or an account start and end,
// as calendar periods in one configured time zone (a day at local midnight, a week on its first
// day, a month on its reset day), and the `total` budget that never resets. Both limiter engines
// take the bounds from here for the time their one clock gives (Redis TIME, or this node's clock).
// Bounds are cached per period until the time leaves them, so the hot path does no calendar math.

export const BUDGET_PERIODS = ["daily", "weekly", "monthly", "total"] as const;
export type BudgetPeriod = (typeof BUDGET_PERIODS)[number];

/** A period as [start, end) in ms since the epoch; `total` is [0, MAX_SAFE_INTEGER). */
export interface PeriodBounds {
  start: number;
  end: number;
}

const WEEKDAYS = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"] as const;
export type Weekday = (typeof WEEKDAYS)[number];

export interface CalendarOptions {
  /** An IANA time zone ("UTC", "Europe/Berlin"). */
  timeZone: string;
  /** The day weeks start on (default monday). */
  weekStart?: Weekday;
  /** The day of the month monthly budgets reset on, 1 to 28 (default 1). */
  monthResetDay?: number;
}

/** The calendar `[billing.budgets]` configures. */
export function calendarOf(config: {
  time_zone: string;
  week_start: Weekday;
  month_reset_day: number;
}): BudgetCalendar {
  return new BudgetCalendar({
    timeZone: config.time_zone,
    weekStart: config.week_start,
    monthResetDay: config.month_reset_day,
  });
}

export class BudgetCalendar {
  /** The zone's wall clock; undefined for UTC, whose wall clock is Date's UTC fields. */
  readonly #format: Intl.DateTimeFormat | undefined;
  readonly #weekStart: number;
  readonly #resetDay: number;
  readonly #cache = new Map<BudgetPeriod, PeriodBounds>();

  constructor(readonly options: CalendarOptions) {
    // UTC (the default) is read from Date without Intl: a formatter with a time zone loads ICU's
    // zone and locale data, ~3.5 MB resident, for a wall clock Date already gives.
    this.#format =
      options.timeZone === "UTC"
        ? undefined
        : new Intl.DateTimeFormat("en-US", {
            timeZone: options.timeZone,
            hourCycle: "h23",
            year: "numeric",
            month: "numeric",
            day: "numeric",
            hour: "numeric",
            minute: "numeric",
            second: "numeric",
          });
    this.#weekStart = WEEKDAYS.indexOf(options.weekStart ?? "monday");
    this.#resetDay = options.monthResetDay ?? 1;
  }

  /** The period of kind `period` that contains `now`. */
  bounds(period: BudgetPeriod, now: number): PeriodBounds {
    if (period === "total") return { start: 0, end: Number.MAX_SAFE_INTEGER };
    const cached = this.#cache.get(period);
    if (cached && cached.start <= now && now < cached.end) return cached;
    const bounds = this.#compute(period, now);
    this.#cache.set(period, bounds);
    return bounds;
  }

  #compute(period: Exclude<BudgetPeriod, "total">, now: number): PeriodBounds {
    const { year, month, day } = this.#local(now);
    if (period === "daily") {
      return { start: this.#midnight(year, month, day), end: this.#midnight(year, month, day + 1) };
    }
    if (period === "weekly") {
      const weekday = new Date(Date.UTC(year, month - 1, day)).getUTCDay();
      const back = (weekday - this.#weekStart + 7) % 7;
      return {
        start: this.#midnight(year, month, day - back),
        end: this.#midnight(year, month, day - back + 7),
      };
    }
    // Monthly: from the reset day of this month if it has passed, else of the previous month.
    const first = day >= this.#resetDay ? { year, month } : { year, month: month - 1 };
    return {
      start: this.#midnight(first.year, first.month, this.#resetDay),
      end: this.#midnight(first.year, first.month + 1, this.#resetDay),
    };
  }

  /** The local calendar date of `now` in the zone. */
  #local(now: number): { year: number; month: number; day: number } {
    const parts = this.#parts(now);
    return { year: parts.year, month: parts.month, day: parts.day };
  }

  #parts(at: number) {
    if (this.#format === undefined) {
      const d = new Date(at);
      return {
        year: d.getUTCFullYear(),
        month: d.getUTCMonth() + 1,
        day: d.getUTCDate(),
        hour: d.getUTCHours(),
        minute: d.getUTCMinutes(),
        second: d.getUTCSeconds(),
      };
    }
    const out = { year: 0, month: 0, day: 0, hour: 0, minute: 0, second: 0 };
    for (const part of this.#format.formatToParts(at)) {
      if (part.type in out) out[part.type as keyof typeof out] = Number(part.value);
    }
    return out;
  }

  /** The zone's offset from UTC at `at`, in ms. */
  #offset(at: number): number {
    const p = this.#parts(at);
    const local = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
    return local - Math.floor(at / 1000) * 1000;
  }

  /** The instant of local midnight starting the given date (month and day may overflow, as Date.UTC allows). */
  #midnight(year: number, month: number, day: number): number {
    const wall = Date.UTC(year, month - 1, day);
    // The offset at the wall time read as UTC, then again at the guess (a DST change between them).
    let guess = wall - this.#offset(wall);
    guess = wall - this.#offset(guess);
    return guess;
  }
}
