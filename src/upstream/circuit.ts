// The circuit breaker of one channel. Closed: calls pass, outcomes are counted. Open (after
// `failures` consecutive failures, or a failure share of at least `failure_ratio` among the last
// `window` calls once `min_calls` were made): the channel is skipped without being called. After
// `cooldown_ms` it is half-open: exactly one probe call passes; its success closes the circuit,
// its failure opens it for another cool-down.
import type { CircuitConfig } from "../config/channels.ts";

export type CircuitState = "closed" | "open" | "half_open";

export interface CircuitSnapshot {
  state: CircuitState;
  consecutive_failures: number;
  /** Failures among the recent calls in the window. */
  recent_failures: number;
  recent_calls: number;
  /** When an open circuit lets its next probe through (ms since the epoch), else null. */
  retry_at: number | null;
  opened_count: number;
}

export class Circuit {
  readonly #config: CircuitConfig;
  readonly #now: () => number;
  #state: CircuitState = "closed";
  #consecutive = 0;
  /** Ring of recent outcomes: true = failure. */
  readonly #window: boolean[] = [];
  #openedAt = 0;
  #probeInFlight = false;
  #openedCount = 0;

  constructor(config: CircuitConfig, now: () => number = Date.now) {
    this.#config = config;
    this.#now = now;
  }

  /** Whether a call would be let through now, without claiming the half-open probe. */
  available(): boolean {
    if (this.#state === "closed") return true;
    if (this.#state === "half_open") return !this.#probeInFlight;
    return this.#now() >= this.#openedAt + this.#config.cooldown_ms;
  }

  /** Claims permission for one call; false means skip the channel. */
  tryAcquire(): boolean {
    if (this.#state === "closed") return true;
    if (!this.available()) return false;
    this.#state = "half_open";
    this.#probeInFlight = true;
    return true;
  }

  /** Milliseconds until an open circuit admits a probe (0 when it admits calls now). */
  waitMs(): number {
    if (this.#state !== "open") return 0;
    return Math.max(0, this.#openedAt + this.#config.cooldown_ms - this.#now());
  }

  success(): void {
    this.#record(false);
    this.#consecutive = 0;
    if (this.#state === "half_open") {
      this.#state = "closed";
      this.#probeInFlight = false;
      this.#window.length = 0;
    }
  }

  failure(): void {
    this.#record(true);
    this.#consecutive++;
    if (this.#state === "half_open" || this.#shouldOpen()) this.#open();
  }

  /** A call that ended without saying anything about the channel's health (e.g. client gone). */
  neutral(): void {
    if (this.#state === "half_open") this.#probeInFlight = false;
  }

  snapshot(): CircuitSnapshot {
    const recentFailures = this.#window.filter(Boolean).length;
    return {
      state: this.#state === "open" && this.available() ? "half_open" : this.#state,
      consecutive_failures: this.#consecutive,
      recent_failures: recentFailures,
      recent_calls: this.#window.length,
      retry_at: this.#state === "open" ? this.#openedAt + this.#config.cooldown_ms : null,
      opened_count: this.#openedCount,
    };
  }

  #record(failed: boolean): void {
    this.#window.push(failed);
    if (this.#window.length > this.#config.window) this.#window.shift();
  }

  #shouldOpen(): boolean {
    if (this.#state !== "closed") return false;
    if (this.#consecutive >= this.#config.failures) return true;
    if (this.#window.length < this.#config.min_calls) return false;
    const failures = this.#window.filter(Boolean).length;
    return failures / this.#window.length >= this.#config.failure_ratio;
  }

  #open(): void {
    this.#state = "open";
    this.#openedAt = this.#now();
    this.#probeInFlight = false;
    this.#openedCount++;
  }
}
