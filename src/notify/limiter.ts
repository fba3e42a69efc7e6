// Rate limiting of key security alerts: at most one alert per key and reason per interval, so a
// client hammering with a revoked key or from a refused address cannot flood a channel. Refusals
// inside the interval are counted and reported with the next alert.

export class AlertLimiter {
  readonly #intervalMs: number;
  readonly #now: () => number;
  readonly #state = new Map<string, { sentAt: number; suppressed: number }>();

  constructor(intervalMs: number, now: () => number = Date.now) {
    this.#intervalMs = intervalMs;
    this.#now = now;
  }

  /** Whether to send an alert for `key` now, and how many refusals were held back before it. */
  take(key: string): { send: boolean; suppressed: number } {
    const now = this.#now();
    const state = this.#state.get(key);
    if (state && now - state.sentAt < this.#intervalMs) {
      state.suppressed++;
      return { send: false, suppressed: state.suppressed };
    }
    const suppressed = state?.suppressed ?? 0;
    this.#state.set(key, { sentAt: now, suppressed: 0 });
    if (this.#state.size > 10_000) this.#prune(now);
    return { send: true, suppressed };
  }

  #prune(now: number): void {
    for (const [key, state] of this.#state) {
      if (now - state.sentAt >= this.#intervalMs && state.suppressed === 0) this.#state.delete(key);
    }
  }
}
