// Every metric family the gateway exports, built from one catalog (FAMILIES below: name, help,
// label names and, for histograms, the bucket set), so the list of what GET /metrics can show is
// in one place and a module that records a metric names it and nothing more. tsc checks each name
// against the catalog and its kind (a counter's name is refused where a histogram's is expected)
// and each histogram's bucket set; whether a gauge has labels is checked when it is built.
import { GaugeSet } from "./gauge-set.ts";
import { Counter, Gauge, Histogram, type LabelValues } from "./instruments.ts";

/** Bucket upper bounds in seconds by set: `in_gateway` 10 µs to 1 s, `upstream` 1 ms to 5 min. */
const BUCKETS = {
  in_gateway: [
    0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 1,
  ],
  upstream: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
} satisfies Record<string, number[]>;

/** A family's HELP text and label names. */
interface FamilyRow {
  help: string;
  labels: string[];
}

/** A histogram's family names one of BUCKETS' sets. */
interface HistogramRow extends FamilyRow {
  buckets: keyof typeof BUCKETS;
}

/**
 * Every family /metrics can show, by kind then name. A gauge has labels exactly when it is built
 * with gaugeSet (checked as it is built).
 */
export const FAMILIES = {
  buckets: BUCKETS,
  counter: {
    modelgate_requests_total: {
      help: "Requests answered, by route pattern, method and HTTP status.",
      labels: ["route", "method", "status"],
    },
    modelgate_tokens_total: {
      help: "Tokens settled, by model, key (capped, see metrics.max_key_labels), answering channel (the last one tried) and type (input, cached_input, output, reasoning). cached_input is part of input, reasoning part of output.",
      labels: ["model", "key", "channel", "type"],
    },
    modelgate_audio_seconds_total: {
      help: "Seconds of audio billed per minute (speech to text), by model, key (capped) and answering channel.",
      labels: ["model", "key", "channel"],
    },
    modelgate_speech_characters_total: {
      help: "Input characters billed per character (speech), by model, key (capped) and answering channel.",
      labels: ["model", "key", "channel"],
    },
    modelgate_cost_usd_total: {
      help: "Cost charged in US dollars, by model, key (capped) and answering channel.",
      labels: ["model", "key", "channel"],
    },
    modelgate_settled_requests_total: {
      help: "Billable requests settled, by model, key (capped), channel and usage source (reported, counted, estimated, none).",
      labels: ["model", "key", "channel", "source"],
    },
    modelgate_errors_total: {
      help: "Error answers by kind (the gateway's error table) and HTTP status.",
      labels: ["kind", "status"],
    },
    modelgate_response_cache_total: {
      help: "Text requests of keys with the response cache on ([cache]), by result: hit (answered from the cache), miss (asked upstream), bypass (Cache-Control no-cache / no-store), stored (a fresh answer kept).",
      labels: ["result"],
    },
    modelgate_limit_refusals_total: {
      help: "Admissions refused by the limiter, by reason (rate_limit_exceeded, concurrency_limit_exceeded, insufficient_quota, daily_quota_exceeded, limiter_unavailable, ...).",
      labels: ["reason"],
    },
  },
  histogram: {
    modelgate_overhead_seconds: {
      help: "In-gateway time per request: total minus the time spent waiting on upstreams (streams: until headers).",
      labels: ["route"],
      buckets: "in_gateway",
    },
    modelgate_upstream_seconds: {
      help: "Time spent waiting on upstreams per request that called one (headers; non-stream: whole body).",
      labels: ["route"],
      buckets: "upstream",
    },
    modelgate_upstream_attempt_duration_seconds: {
      help: "Upstream attempts by channel and outcome (ok or the error kind): time until headers (non-stream: the whole body), or until it failed.",
      labels: ["channel", "outcome"],
      buckets: "upstream",
    },
    modelgate_time_to_first_token_seconds: {
      help: "Streamed answers: time from sending the upstream request to the first byte of its event stream, by channel.",
      labels: ["channel"],
      buckets: "upstream",
    },
  },
  gauge: {
    modelgate_requests_in_flight: {
      help: "Requests whose handler has not returned yet.",
      labels: [],
    },
    process_resident_memory_bytes: {
      help: "Resident memory of this process.",
      labels: [],
    },
    modelgate_channel_circuit_state: {
      help: "Circuit breaker state per channel: 0 closed, 1 half-open, 2 open.",
      labels: ["channel"],
    },
    modelgate_usage_journal_backlog_records: {
      help: "Usage records settled (durable in the journal or queued) but not yet committed to the store.",
      labels: [],
    },
    modelgate_limiter_epoch: {
      help: "The epoch of the shared limiter's (Redis's) copy this node works in; it moves each time Redis's figures are rebuilt from the ledger (0 without Redis).",
      labels: [],
    },
    modelgate_limiter_reconciled_accounts: {
      help: "Accounts whose Redis figures this node found different from the ledger's and corrected, since it started (docs/cluster.md, Reconciliation).",
      labels: [],
    },
    modelgate_limiter_reconciled_nanos: {
      help: "Sum of the balance corrections (absolute, nanodollars) this node's reconciliations made since it started.",
      labels: [],
    },
  },
} satisfies {
  buckets: typeof BUCKETS;
  counter: Record<string, FamilyRow>;
  histogram: Record<string, HistogramRow>;
  gauge: Record<string, FamilyRow>;
};

export type CounterName = keyof typeof FAMILIES.counter;
export type HistogramName = keyof typeof FAMILIES.histogram;
export type GaugeName = keyof typeof FAMILIES.gauge;

export function counter(name: CounterName): Counter {
  const { help, labels } = FAMILIES.counter[name];
  return new Counter(name, help, labels);
}

export function histogram(name: HistogramName): Histogram {
  const { help, labels, buckets } = FAMILIES.histogram[name];
  return new Histogram(name, help, labels, BUCKETS[buckets]);
}

/** A gauge without labels, read at scrape time. */
export function gauge(name: GaugeName, read: () => number): Gauge {
  const { help, labels } = FAMILIES.gauge[name];
  if (labels.length > 0) throw new Error(`${name} has labels in FAMILIES: build it with gaugeSet`);
  return new Gauge(name, help, read);
}

/** A gauge with labels: one series per label set `read` returns at scrape time. */
export function gaugeSet(
  name: GaugeName,
  read: () => Iterable<{ values: LabelValues; value: number }>,
): GaugeSet {
  const { help, labels } = FAMILIES.gauge[name];
  if (labels.length === 0) throw new Error(`${name} has no labels in FAMILIES: build it with gauge`);
  return new GaugeSet(name, help, labels, read);
}
