// Counters and fixed-bucket histograms with the Prometheus text exposition (format 0.0.4). A tiny
// writer rather than prom-client: prom-client works in Bun and in the compiled binary, but importing
// it adds ~13 MB of resident memory (measured in the compiled binary) against a 60 MB idle budget,
// and the gateway needs only counters and histograms keyed by a few bounded labels.

/** Label values in a fixed order (the metric's label names give the order). */
export type LabelValues = readonly string[];

/** A label value escaped for the text format (backslash, quote, newline). */
export function escapeLabel(value: string): string {
  return value.replaceAll("\\", "\\\\").replaceAll('"', '\\"').replaceAll("\n", "\\n");
}

function labelText(names: readonly string[], values: LabelValues, extra?: string): string {
  const parts = names.map((name, i) => `${name}="${escapeLabel(values[i] ?? "")}"`);
  if (extra !== undefined) parts.push(extra);
  return parts.length === 0 ? "" : `{${parts.join(",")}}`;
}

function formatNumber(n: number): string {
  return Number.isFinite(n) ? String(n) : n > 0 ? "+Inf" : "-Inf";
}

/** One label set's count. */
export interface CounterSeries {
  readonly values: LabelValues;
  count: number;
}

export interface HistogramSeries {
  values: LabelValues;
  /** Non-cumulative counts per bucket; the last slot is +Inf. */
  counts: Float64Array;
  sum: number;
  count: number;
}

/** A metric family: its name, help and label names, and one series per label set. */
abstract class Family<S extends { readonly values: LabelValues }> {
  readonly #series = new Map<string, S>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
  ) {}

  /** A new, empty series of a label set. */
  protected abstract fresh(values: LabelValues): S;

  /** The series of a label set (created empty): a caller that keeps it skips this lookup. */
  series(values: LabelValues): S {
    const key = values.join("\u0000");
    let series = this.#series.get(key);
    if (series === undefined) {
      series = this.fresh([...values]);
      this.#series.set(key, series);
    }
    return series;
  }

  /** The HELP and TYPE lines, then each series' lines. */
  protected renderAs(type: string, lines: string[], each: (series: S) => void): void {
    lines.push(`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} ${type}`);
    for (const s of this.#series.values()) each(s);
  }
}

/** A monotonically increasing count per label set. */
export class Counter extends Family<CounterSeries> {
  protected fresh(values: LabelValues): CounterSeries {
    return { values, count: 0 };
  }

  inc(values: LabelValues, by = 1): void {
    this.series(values).count += by;
  }

  render(lines: string[]): void {
    this.renderAs("counter", lines, (s) => {
      lines.push(`${this.name}${labelText(this.labelNames, s.values)} ${s.count}`);
    });
  }
}

/** Observations in seconds, counted into fixed buckets per label set. */
export class Histogram extends Family<HistogramSeries> {
  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    readonly buckets: readonly number[],
  ) {
    super(name, help, labelNames);
  }

  protected fresh(values: LabelValues): HistogramSeries {
    return { values, counts: new Float64Array(this.buckets.length + 1), sum: 0, count: 0 };
  }

  observe(values: LabelValues, seconds: number): void {
    this.observeIn(this.series(values), seconds);
  }

  /** Counts one observation into a series of this histogram. */
  observeIn(series: HistogramSeries, seconds: number): void {
    let i = 0;
    while (i < this.buckets.length && seconds > (this.buckets[i] ?? Number.POSITIVE_INFINITY)) i++;
    series.counts[i] = (series.counts[i] ?? 0) + 1;
    series.sum += seconds;
    series.count++;
  }

  render(lines: string[]): void {
    this.renderAs("histogram", lines, (s) => {
      let cumulative = 0;
      for (let i = 0; i <= this.buckets.length; i++) {
        cumulative += s.counts[i] ?? 0;
        const le = formatNumber(this.buckets[i] ?? Number.POSITIVE_INFINITY);
        lines.push(`${this.name}_bucket${labelText(this.labelNames, s.values, `le="${le}"`)} ${cumulative}`);
      }
      lines.push(`${this.name}_sum${labelText(this.labelNames, s.values)} ${s.sum}`);
      lines.push(`${this.name}_count${labelText(this.labelNames, s.values)} ${s.count}`);
    });
  }
}

/** A value read at scrape time. */
export class Gauge {
  constructor(
    readonly name: string,
    readonly help: string,
    readonly read: () => number,
  ) {}

  render(lines: string[]): void {
    lines.push(`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} gauge`);
    lines.push(`${this.name} ${formatNumber(this.read())}`);
  }
}
