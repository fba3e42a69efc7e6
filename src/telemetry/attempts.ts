// Watches each upstream attempt of the failover loop: a client span per attempt (channel, upstream
// model, HTTP status, why it was retried) whose context goes upstream as `traceparent`, and the
// attempt's latency and a stream's time to first byte in the traffic metrics.
import type { TrafficMetrics } from "../metrics/traffic.ts";
import type { UpstreamTiming } from "../upstream/guard.ts";
import type { Attempt } from "../upstream/retry.ts";
import type { AttemptSpan, RequestTrace } from "./span.ts";

export interface AttemptWatch {
  traffic: TrafficMetrics;
  trace: RequestTrace | undefined;
  /** Trace-context headers to send when there is no trace here (the client's, passed through). */
  passThrough: Readonly<Record<string, string>> | undefined;
  stream: boolean;
}

/** What an attempt needs to know of the channel it calls. */
export interface Called {
  name: string;
  /** The model id sent to this channel, the provider name of its protocol. */
  model: string;
  provider: string;
}

interface Answer {
  response: Response;
  timing: UpstreamTiming;
}

/** Runs one attempt: `headers` are the trace-context headers to send upstream (maybe none). */
export type RunAttempt<T> = (headers: Readonly<Record<string, string>> | undefined) => Promise<Attempt<T>>;

function describeAttempt(span: AttemptSpan, called: Called, retryReason: string | undefined): void {
  span.set("gen_ai.operation.name", "chat");
  span.set("gen_ai.provider.name", called.provider);
  span.set("gen_ai.request.model", called.model);
  span.set("modelgate.retry_reason", retryReason);
}

/**
 * A failover loop's attempts, watched: the returned function runs attempt number n (counting from
 * 1) of the request on `called` and records it.
 */
export function watchAttempts<T extends Answer>(watch: AttemptWatch) {
  let count = 0;
  let retryReason: string | undefined;
  return async (called: Called, run: RunAttempt<T>): Promise<Attempt<T>> => {
    count++;
    const span = watch.trace?.attempt(called.name, count);
    if (span) describeAttempt(span, called, retryReason);
    const startedAt = performance.now();
    let outcome = "aborted";
    try {
      const result = await run(span?.headers ?? watch.passThrough);
      if (result.ok) {
        outcome = "ok";
        const { timing, response } = result.value;
        span?.set("http.response.status_code", response.status);
        if (watch.stream && timing.firstByteAt !== undefined)
          watch.traffic.firstToken(called.name, (timing.firstByteAt - timing.startedAt) / 1000);
      } else {
        const { error, status } = result.failure;
        outcome = error.kind;
        retryReason = status === undefined ? error.kind : `${error.kind} (${status})`;
        span?.set("http.response.status_code", status);
        span?.set("modelgate.retryable", error.retryable);
        span?.fail(error.kind, error.message);
      }
      return result;
    } finally {
      watch.traffic.attempt(called.name, outcome, (performance.now() - startedAt) / 1000);
      span?.end();
    }
  };
}
