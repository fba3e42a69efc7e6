// Exact sliding windows: the admission times of the requests still inside one (RPM), and the tokens
// they hold (TPM).
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

/**
 * An exact sliding window of tokens: each admitted request holds its worst case from its admission
 * time until it leaves the window, corrected to the tokens it used when it is released (while it is
 * still inside). `used` is the sum of what the window holds.
 */
export class TokenWindow {
  #entries: { at: number; tokens: number; id: string }[] = [];
  #head = 0;
  readonly #byId = new Map<string, { at: number; tokens: number; id: string }>();
  used = 0;

  constructor(readonly windowMs: number) {}

  prune(now: number): void {
    const entries = this.#entries;
    const edge = now - this.windowMs;
    while (this.#head < entries.length) {
      const entry = entries[this.#head];
      if (entry === undefined || entry.at > edge) break;
      this.used -= entry.tokens;
      this.#byId.delete(entry.id);
      this.#head++;
    }
    if (this.#head > 1024 && this.#head * 2 > entries.length) {
      this.#entries = entries.slice(this.#head);
      this.#head = 0;
    }
  }

  untilOldestLeaves(now: number): number {
    const oldest = this.#entries[this.#head];
    return oldest === undefined ? 0 : Math.max(0, oldest.at + this.windowMs - now);
  }

  /** How long until `need` more tokens fit under `limit` (entries leave oldest first); -1 never. */
  waitFor(need: number, limit: number, now: number): number {
    if (need > limit) return -1;
    let used = this.used;
    for (let i = this.#head; i < this.#entries.length && used + need > limit; i++) {
      const entry = this.#entries[i];
      if (entry === undefined) break;
      used -= entry.tokens;
      if (used + need <= limit) return Math.max(0, entry.at + this.windowMs - now);
    }
    return 0;
  }

  add(id: string, tokens: number, now: number): void {
    const entry = { at: now, tokens, id };
    this.#entries.push(entry);
    this.#byId.set(id, entry);
    this.used += tokens;
  }

  /** Replaces what `id` holds with the tokens it used (nothing when it already left the window). */
  correct(id: string, tokens: number): void {
    const entry = this.#byId.get(id);
    if (!entry) return;
    this.used += tokens - entry.tokens;
    entry.tokens = tokens;
  }

  /** Takes `id` out of the window (an admission undone). */
  remove(id: string): void {
    this.correct(id, 0);
  }
}
