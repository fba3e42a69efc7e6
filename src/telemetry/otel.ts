// Request traces on the official OpenTelemetry SDK, exported over OTLP/HTTP. Loaded only when
// `[telemetry] otlp_endpoint` is set (src/telemetry/open.ts imports this module on demand).
//
// Spans are parented explicitly (no global context manager): the request span is a child of the
// client's W3C `traceparent` when one came, and every child span is started from its context.
// Cost and usage reach the request span from the usage feed, keyed by request id.
import {
  type Attributes,
  type Context,
  defaultTextMapSetter,
  type Tracer as OtelTracer,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
} from "@opentelemetry/sdk-trace-base";
import type { UsageEvent, UsageFeed } from "../billing/feed.ts";
import { type TelemetryConfig, tracesUrl } from "../config/telemetry.ts";
import { settledAttributes } from "./attributes.ts";
import type { AttemptSpan, AttrValue, RequestTrace, SpanHandle, Tracer } from "./span.ts";

const propagator = new W3CTraceContextPropagator();

const headerGetter = {
  get: (carrier: Headers, key: string) => carrier.get(key) ?? undefined,
  keys: (carrier: Headers) => [...carrier.keys()],
};

class Handle implements SpanHandle {
  constructor(readonly span: Span) {}

  set(name: string, value: AttrValue | undefined): void {
    if (value !== undefined) this.span.setAttribute(name, value as string | number | boolean | string[]);
  }

  fail(kind: string, message: string): void {
    this.span.setAttribute("error.type", kind);
    this.span.setStatus({ code: SpanStatusCode.ERROR, message });
  }

  end(): void {
    this.span.end();
  }
}

class Attempt extends Handle implements AttemptSpan {
  readonly headers: Record<string, string> = {};

  constructor(span: Span, parent: Context) {
    super(span);
    propagator.inject(trace.setSpan(parent, span), this.headers, defaultTextMapSetter);
  }
}

class RequestSpan extends Handle implements RequestTrace {
  readonly #tracer: OtelTracer;
  readonly #context: Context;
  readonly #done: () => void;
  #holds = 0;
  #finished = false;
  #ended = false;
  /** The settlement span while it runs: the feed's cost lands on it too. */
  settlement: Span | undefined;

  constructor(
    tracer: OtelTracer,
    span: Span,
    parent: Context,
    readonly captureContent: boolean,
    done: () => void,
  ) {
    super(span);
    this.#tracer = tracer;
    this.#context = trace.setSpan(parent, span);
    this.#done = done;
  }

  child(name: string): SpanHandle {
    const span = this.#tracer.startSpan(name, { kind: SpanKind.INTERNAL }, this.#context);
    if (name === "settlement") this.settlement = span;
    return new Handle(span);
  }

  attempt(channel: string, attempt: number): AttemptSpan {
    const attributes: Attributes = { "modelgate.channel": channel, "modelgate.attempt": attempt };
    const span = this.#tracer.startSpan(
      `upstream ${channel}`,
      { kind: SpanKind.CLIENT, attributes },
      this.#context,
    );
    return new Attempt(span, this.#context);
  }

  hold(): () => void {
    this.#holds++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#holds--;
      this.#maybeEnd();
    };
  }

  finish(status: number): void {
    this.span.setAttribute("http.response.status_code", status);
    if (status >= 500) this.span.setStatus({ code: SpanStatusCode.ERROR });
    this.#finished = true;
    this.#maybeEnd();
  }

  override end(): void {
    this.finish(0);
  }

  #maybeEnd(): void {
    if (!this.#finished || this.#holds > 0 || this.#ended) return;
    this.#ended = true;
    this.span.end();
    this.#done();
  }
}

/** A tracer exporting to the configured OTLP/HTTP endpoint, with cost and usage from `feed`. */
export function startTracer(config: TelemetryConfig, version: string, feed: UsageFeed | undefined): Tracer {
  const endpoint = config.otlp_endpoint;
  if (endpoint === undefined) throw new Error("telemetry.otlp_endpoint is not set");
  const exporter = new OTLPTraceExporter({ url: tracesUrl(endpoint) });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": config.service_name, "service.version": version }),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(config.sampling_ratio) }),
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 1000 })],
  });
  const tracer = provider.getTracer("modelgate", version);
  const open = new Map<string, RequestSpan>();
  const unsubscribe = feed?.subscribe((event: UsageEvent) => {
    if (event.unbilled) return; // no settlement: no cost to put on the span
    const request = open.get(event.requestId);
    if (request === undefined || !request.span.isRecording()) return;
    const attributes = settledAttributes(event);
    request.span.setAttributes(attributes);
    request.settlement?.setAttributes(attributes);
  });
  return {
    begin(request, route, requestId) {
      const parent = propagator.extract(ROOT_CONTEXT, request.headers, headerGetter);
      const method = request.method;
      const span = tracer.startSpan(
        `${method} ${route}`,
        {
          kind: SpanKind.SERVER,
          attributes: {
            "http.request.method": method,
            "http.route": route,
            "modelgate.request_id": requestId,
          },
        },
        parent,
      );
      const traced = new RequestSpan(tracer, span, parent, config.capture_content, () =>
        open.delete(requestId),
      );
      if (span.isRecording()) open.set(requestId, traced);
      return traced;
    },
    async shutdown() {
      unsubscribe?.();
      await provider.shutdown();
    },
  };
}
