// What operators chart beyond request counts: tokens, audio seconds, speech characters and cost
// by model, key and channel; upstream
// attempt latency and time to first token by channel; errors by kind (the error table of
// src/wire/errors.ts); limiter refusals by reason; circuit state per channel; the usage journal's
// backlog. Label sets are bounded: models and channels come from the configuration and the
// catalog, kinds and reasons from fixed tables, and key names are capped (`metrics.max_key_labels`,
// the rest counted as `other`, src/metrics/labels.ts).
import type { UsageEvent } from "../billing/feed.ts";
import { type LimiterHealth, NO_LIMITER_HEALTH } from "../limits/limiter.ts";
import type { CircuitState } from "../upstream/circuit.ts";
import type { ErrorKind } from "../wire/errors.ts";
import { counter, gauge, gaugeSet, histogram } from "./families.ts";
import type { GaugeSet } from "./gauge-set.ts";
import type { CounterSeries, Gauge, HistogramSeries } from "./instruments.ts";
import { BoundedLabel } from "./labels.ts";

/** Circuit states as gauge values: 0 closed, 1 half-open (probing), 2 open. */
export const CIRCUIT_VALUE: Record<CircuitState, number> = { closed: 0, half_open: 1, open: 2 };

/** Error kinds that are admission refusals (their code is the reason). */
const REFUSAL_KINDS: ReadonlySet<ErrorKind> = new Set([
  "rate_limited",
  "quota_exceeded",
  "limiter_unavailable",
]);

/** The series one (model, key, channel) settles into, looked up once per settlement. */
interface UsageSeries {
  input: CounterSeries;
  cachedInput: CounterSeries;
  output: CounterSeries;
  reasoning: CounterSeries;
  cost: CounterSeries;
  /** Made at the first audio settlement of the series: text series show no audio lines. */
  audioSeconds: CounterSeries | undefined;
  characters: CounterSeries | undefined;
  settled: Record<UsageEvent["usageSource"], CounterSeries>;
}

/** What the traffic metrics read at scrape time. */
export interface TrafficSources {
  circuits: () => Iterable<{ channel: string; state: CircuitState }>;
  /** Usage records settled but not yet committed to the store. */
  journalBacklog: () => number;
  /** The shared limiter's epoch and what its reconciliations corrected (zeros without one). */
  limiter?: () => LimiterHealth;
}

export class TrafficMetrics {
  readonly #keys: BoundedLabel;
  readonly #tokens = counter("modelgate_tokens_total");
  readonly #cost = counter("modelgate_cost_usd_total");
  readonly #audioSeconds = counter("modelgate_audio_seconds_total");
  readonly #characters = counter("modelgate_speech_characters_total");
  readonly #settled = counter("modelgate_settled_requests_total");
  readonly #attempts = histogram("modelgate_upstream_attempt_duration_seconds");
  readonly #ttft = histogram("modelgate_time_to_first_token_seconds");
  readonly #errors = counter("modelgate_errors_total");
  readonly #refusals = counter("modelgate_limit_refusals_total");
  readonly #cache = counter("modelgate_response_cache_total");
  readonly #scraped: (GaugeSet | Gauge)[];
  readonly #usage = new Map<string, UsageSeries>();
  readonly #attemptSeries = new Map<string, HistogramSeries>();
  readonly #ttftSeries = new Map<string, HistogramSeries>();

  constructor(maxKeyLabels: number, sources: TrafficSources) {
    this.#keys = new BoundedLabel(maxKeyLabels);
    const limiter = sources.limiter ?? (() => NO_LIMITER_HEALTH);
    this.#scraped = [
      gaugeSet("modelgate_channel_circuit_state", function* () {
        for (const c of sources.circuits()) yield { values: [c.channel], value: CIRCUIT_VALUE[c.state] };
      }),
      gauge("modelgate_usage_journal_backlog_records", sources.journalBacklog),
      gauge("modelgate_limiter_epoch", () => limiter().epoch),
      gauge("modelgate_limiter_reconciled_accounts", () => limiter().correctedAccounts),
      gauge("modelgate_limiter_reconciled_nanos", () => limiter().correctedNanos),
    ];
  }

  /** Counts a settled request's tokens and cost (a usage feed subscriber; unbilled requests are not counted). */
  settled(event: UsageEvent): void {
    if (event.unbilled) return;
    const key = this.#keys.of(event.keyName || event.keyId);
    const channel = event.channels.at(-1) ?? "none";
    const series = this.#usageSeries(event.model, key, channel);
    series.input.count += event.inputTokens;
    series.cachedInput.count += event.cachedInputTokens;
    series.output.count += event.outputTokens;
    series.reasoning.count += event.reasoningTokens;
    series.cost.count += event.costNanos / 1e9;
    if (event.audioMs !== undefined && event.audioMs > 0) {
      series.audioSeconds ??= this.#audioSeconds.series([event.model, key, channel]);
      series.audioSeconds.count += event.audioMs / 1000;
    }
    if (event.characters !== undefined && event.characters > 0) {
      series.characters ??= this.#characters.series([event.model, key, channel]);
      series.characters.count += event.characters;
    }
    series.settled[event.usageSource].count++;
  }

  #usageSeries(model: string, key: string, channel: string): UsageSeries {
    const id = `${model}\u0000${key}\u0000${channel}`;
    let series = this.#usage.get(id);
    if (series === undefined) {
      const tokens = (type: string) => this.#tokens.series([model, key, channel, type]);
      const settled = (source: string) => this.#settled.series([model, key, channel, source]);
      series = {
        input: tokens("input"),
        cachedInput: tokens("cached_input"),
        output: tokens("output"),
        reasoning: tokens("reasoning"),
        cost: this.#cost.series([model, key, channel]),
        audioSeconds: undefined,
        characters: undefined,
        settled: {
          reported: settled("reported"),
          counted: settled("counted"),
          estimated: settled("estimated"),
          none: settled("none"),
        },
      };
      this.#usage.set(id, series);
    }
    return series;
  }

  /** One upstream attempt ended: `outcome` is `ok` or its error kind. */
  attempt(channel: string, outcome: string, seconds: number): void {
    const id = `${channel}\u0000${outcome}`;
    let series = this.#attemptSeries.get(id);
    if (series === undefined) {
      series = this.#attempts.series([channel, outcome]);
      this.#attemptSeries.set(id, series);
    }
    this.#attempts.observeIn(series, seconds);
  }

  /** A streamed answer's first byte arrived `seconds` after its attempt was sent. */
  firstToken(channel: string, seconds: number): void {
    let series = this.#ttftSeries.get(channel);
    if (series === undefined) {
      series = this.#ttft.series([channel]);
      this.#ttftSeries.set(channel, series);
    }
    this.#ttft.observeIn(series, seconds);
  }

  /** An error answer went out; refusals are counted by reason as well. */
  error(kind: ErrorKind, status: number, code: string | null): void {
    this.#errors.inc([kind, String(status)]);
    if (REFUSAL_KINDS.has(kind)) this.#refusals.inc([code ?? kind]);
  }

  /** A text request of a key with the response cache on: what the cache did for it. */
  cache(result: "hit" | "miss" | "bypass" | "stored"): void {
    this.#cache.inc([result]);
  }

  render(lines: string[]): void {
    this.#cache.render(lines);
    this.#tokens.render(lines);
    this.#audioSeconds.render(lines);
    this.#characters.render(lines);
    this.#cost.render(lines);
    this.#settled.render(lines);
    this.#attempts.render(lines);
    this.#ttft.render(lines);
    this.#errors.render(lines);
    this.#refusals.render(lines);
    for (const gauge of this.#scraped) gauge.render(lines);
  }
}
