// The gateway's metrics: requests by route, method and status; the in-gateway overhead of each
// request; the time spent waiting on upstreams; requests in flight and resident memory. Rendered
// in the Prometheus text format by GET /metrics on the gateway's own listener.
//
// Overhead = total − upstream, per request, where
// - total runs from the moment the edge builds the request context until the handler hands its
//   Response back to the listener (non-stream: the whole answer is ready and settled; stream: the
//   headers are ready, the relaying of events that follows is not counted);
// - upstream is the time the upstream HTTP module spent waiting on upstreams for this request:
//   from sending each attempt until its response headers, plus, for non-stream answers, reading
//   the upstream's body (RequestContext.upstreamMs, summed over failover attempts).
// So overhead is what the gateway itself adds: reading the client body, authentication, decoding,
// limits, reservation, routing, building the upstream request, relaying and settling.
import { counter, gauge, histogram } from "./families.ts";
import type { Gauge } from "./instruments.ts";

export const METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

export interface RequestTiming {
  /** The route pattern (bounded: e.g. `/v1/models/:id`, never the raw path). */
  route: string;
  method: string;
  status: number;
  totalMs: number;
  upstreamMs: number;
}

export class Metrics {
  readonly #requests = counter("modelgate_requests_total");
  readonly #overhead = histogram("modelgate_overhead_seconds");
  readonly #upstream = histogram("modelgate_upstream_seconds");
  readonly #gauges: Gauge[];
  #inFlight = 0;
  /** Label arrays per route, reused so that recording allocates nothing per request. */
  readonly #routeLabels = new Map<string, readonly string[]>();

  constructor() {
    this.#gauges = [
      gauge("modelgate_requests_in_flight", () => this.#inFlight),
      gauge("process_resident_memory_bytes", () => process.memoryUsage.rss()),
    ];
  }

  started(): void {
    this.#inFlight++;
  }

  /** Records one answered request; returns its overhead in microseconds. */
  finished(timing: RequestTiming): number {
    this.#inFlight--;
    const overheadMs = Math.max(0, timing.totalMs - timing.upstreamMs);
    let labels = this.#routeLabels.get(timing.route);
    if (!labels) {
      labels = [timing.route];
      this.#routeLabels.set(timing.route, labels);
    }
    this.#requests.inc([timing.route, timing.method, statusText(timing.status)]);
    this.#overhead.observe(labels, overheadMs / 1000);
    if (timing.upstreamMs > 0) this.#upstream.observe(labels, timing.upstreamMs / 1000);
    return Math.round(overheadMs * 1000);
  }

  render(): string {
    const lines: string[] = [];
    this.#requests.render(lines);
    this.#overhead.render(lines);
    this.#upstream.render(lines);
    for (const gauge of this.#gauges) gauge.render(lines);
    return `${lines.join("\n")}\n`;
  }
}

const STATUS_TEXT = new Map<number, string>();

/** The status as a label value, without a string allocation per request. */
function statusText(status: number): string {
  let text = STATUS_TEXT.get(status);
  if (text === undefined) {
    text = String(status);
    STATUS_TEXT.set(status, text);
  }
  return text;
}
