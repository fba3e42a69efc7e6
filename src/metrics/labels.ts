// Bounded label values: a label fed from an open set (API key names) keeps the first `cap`
// distinct values it sees and folds every later one into `other`, so one busy gateway with
// thousands of keys cannot grow the scrape or the memory of Prometheus without bound.

/** The label value every value past the cap is counted under. */
export const OTHER = "other";

export class BoundedLabel {
  readonly #seen = new Set<string>();

  constructor(readonly cap: number) {}

  /** `value` itself while fewer than `cap` distinct values were seen (or it was one of them), else `other`. */
  of(value: string): string {
    if (this.#seen.has(value)) return value;
    if (this.#seen.size >= this.cap) return OTHER;
    this.#seen.add(value);
    return value;
  }
}
