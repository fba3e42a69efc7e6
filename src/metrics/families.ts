// Every metric family the gateway exports, built from one catalog (families.json: name, help,
// label names and, for histograms, the bucket set), so the list of what GET /metrics can show is
// in one place and a module that records a metric names it and nothing more. tsc checks each name
// against the catalog and its kind (a counter's name is refused where a histogram's is expected);
// whether a gauge has labels is checked when it is built.
import FAMILIES from "./families.json";
import { GaugeSet } from "./gauge-set.ts";
import { Counter, Gauge, Histogram, type LabelValues } from "./histogram.ts";

/** Bucket upper bounds in seconds by set: `in_gateway` 10 µs to 1 s, `upstream` 1 ms to 5 min. */
const BUCKETS: Readonly<Record<string, readonly number[]>> = FAMILIES.buckets;

export type CounterName = keyof typeof FAMILIES.counter;
export type HistogramName = keyof typeof FAMILIES.histogram;
export type GaugeName = keyof typeof FAMILIES.gauge;

export function counter(name: CounterName): Counter {
  const { help, labels } = FAMILIES.counter[name];
  return new Counter(name, help, labels);
}

export function histogram(name: HistogramName): Histogram {
  const { help, labels, buckets } = FAMILIES.histogram[name];
  const bounds = BUCKETS[buckets];
  if (bounds === undefined) throw new Error(`${name}: families.json has no bucket set "${buckets}"`);
  return new Histogram(name, help, labels, bounds);
}

/** A gauge without labels, read at scrape time. */
export function gauge(name: GaugeName, read: () => number): Gauge {
  const { help, labels } = FAMILIES.gauge[name];
  if (labels.length > 0) throw new Error(`${name} has labels in families.json: build it with gaugeSet`);
  return new Gauge(name, help, read);
}

/** A gauge with labels: one series per label set `read` returns at scrape time. */
export function gaugeSet(
  name: GaugeName,
  read: () => Iterable<{ values: LabelValues; value: number }>,
): GaugeSet {
  const { help, labels } = FAMILIES.gauge[name];
  if (labels.length === 0) throw new Error(`${name} has no labels in families.json: build it with gauge`);
  return new GaugeSet(name, help, labels, read);
}
