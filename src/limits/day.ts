// The billing day: daily caps count from 00:00 at a configured offset from UTC (UTC by default).
const DAY_MS = 86_400_000;

export class BillingDay {
  readonly #offsetMs: number;

  /** `offsetMinutes` east of UTC: +480 makes the day start at 00:00 UTC+8. */
  constructor(offsetMinutes = 0) {
    this.#offsetMs = offsetMinutes * 60_000;
  }

  /** A number that changes exactly when the billing day changes. */
  index(now: number): number {
    return Math.floor((now + this.#offsetMs) / DAY_MS);
  }

  /** When the billing day containing `now` started (ms since the epoch). */
  start(now: number): number {
    return this.index(now) * DAY_MS - this.#offsetMs;
  }

  /** When the next billing day starts. */
  end(now: number): number {
    return this.start(now) + DAY_MS;
  }
}
