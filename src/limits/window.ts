// An exact sliding one-minute window: the admission times of the requests still inside it.
// A request admitted at t counts for every instant in [t, t + window) and no longer at t + window,
// so the limit holds over every window and a refused client learns the exact wait.

export class SlidingWindow {
  #times: number[] = [];
  #head = 0;

  constructor(readonly windowMs: number) {}

  /** Drops requests that left the window by `now`. */
  prune(now: number): void {
    const times = this.#times;
    const edge = now - this.windowMs;
    while (this.#head < times.length && (times[this.#head] ?? 0) <= edge) this.#head++;
    // Compact now and then so the array does not grow without bound.
    if (this.#head > 1024 && this.#head * 2 > times.length) {
      this.#times = times.slice(this.#head);
      this.#head = 0;
    }
  }

  get count(): number {
    return this.#times.length - this.#head;
  }

  /** Milliseconds until the oldest request leaves the window; 0 when empty. */
  untilOldestLeaves(now: number): number {
    const oldest = this.#times[this.#head];
    return oldest === undefined ? 0 : Math.max(0, oldest + this.windowMs - now);
  }

  add(now: number): void {
    this.#times.push(now);
  }
}
