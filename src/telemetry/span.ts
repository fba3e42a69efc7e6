// What the request path sees of tracing: plain interfaces with no OpenTelemetry import, so that a
// gateway with telemetry off loads none of the SDK (src/telemetry/open.ts imports it on demand).
// The implementation is src/telemetry/otel.ts.

export type AttrValue = string | number | boolean | string[];

/** One span: attributes while it runs, an error status, its end. */
export interface SpanHandle {
  set(name: string, value: AttrValue | undefined): void;
  /** Marks the span failed with a low-cardinality error kind (`error.type`) and a message. */
  fail(kind: string, message: string): void;
  end(): void;
}

/** One upstream attempt: a client span whose context is sent upstream as `traceparent`. */
export interface AttemptSpan extends SpanHandle {
  /** W3C trace-context headers (`traceparent`, `tracestate`) naming this attempt as the parent. */
  readonly headers: Readonly<Record<string, string>>;
}

/** The span of one client request and the children hung under it. */
export interface RequestTrace extends SpanHandle {
  /** A child span (`admission`, `settlement`). */
  child(name: string): SpanHandle;
  /** A child client span for one call to an upstream channel. */
  attempt(channel: string, attempt: number): AttemptSpan;
  /**
   * Keeps the request span open past the handler's return until the returned function is called:
   * a stream's settlement happens after its headers went out.
   */
  hold(): () => void;
  /** The handler answered with `status`; ends the span unless held (then at the release). */
  finish(status: number): void;
  /** Whether the prompt text may go into the request span (`telemetry.capture_content`). */
  readonly captureContent: boolean;
}

/** Starts request traces; one per gateway process when telemetry is on. */
export interface Tracer {
  /** The span of a client request, a child of the client's `traceparent` when it sent one. */
  begin(request: Request, route: string, requestId: string): RequestTrace;
  /** Exports what is buffered and stops. */
  shutdown(): Promise<void>;
}
