// An OTLP/HTTP trace receiver for tests: a loopback server taking POST /v1/traces with the JSON
// encoding of ExportTraceServiceRequest (what @opentelemetry/exporter-trace-otlp-http sends),
// decoded by a schema written from the OTLP specification's JSON mapping, flattened into spans.
import * as v from "valibot";

const AnyValue: v.GenericSchema<unknown> = v.lazy(() =>
  v.object({
    stringValue: v.optional(v.string()),
    boolValue: v.optional(v.boolean()),
    intValue: v.optional(v.union([v.string(), v.number()])),
    doubleValue: v.optional(v.number()),
    arrayValue: v.optional(v.object({ values: v.optional(v.array(AnyValue), []) })),
  }),
);

const KeyValue = v.object({ key: v.string(), value: AnyValue });

const SpanSchema = v.object({
  traceId: v.pipe(v.string(), v.regex(/^[0-9a-f]{32}$/)),
  spanId: v.pipe(v.string(), v.regex(/^[0-9a-f]{16}$/)),
  parentSpanId: v.optional(v.string()),
  name: v.string(),
  kind: v.number(),
  startTimeUnixNano: v.union([v.string(), v.number()]),
  endTimeUnixNano: v.union([v.string(), v.number()]),
  attributes: v.optional(v.array(KeyValue), []),
  status: v.optional(v.object({ code: v.optional(v.number()), message: v.optional(v.string()) })),
});

const ExportRequest = v.object({
  resourceSpans: v.array(
    v.object({
      resource: v.optional(v.object({ attributes: v.optional(v.array(KeyValue), []) })),
      scopeSpans: v.array(v.object({ spans: v.optional(v.array(SpanSchema), []) })),
    }),
  ),
});

export type Attr = string | number | boolean | Attr[];

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, Attr>;
  /** 0 unset, 1 ok, 2 error. */
  statusCode: number;
  resource: Record<string, Attr>;
}

function decodeValue(value: unknown): Attr {
  const any = value as {
    stringValue?: string;
    boolValue?: boolean;
    intValue?: string | number;
    doubleValue?: number;
    arrayValue?: { values: unknown[] };
  };
  if (any.stringValue !== undefined) return any.stringValue;
  if (any.boolValue !== undefined) return any.boolValue;
  if (any.intValue !== undefined) return Number(any.intValue);
  if (any.doubleValue !== undefined) return any.doubleValue;
  if (any.arrayValue !== undefined) return any.arrayValue.values.map(decodeValue);
  return "";
}

function attributes(list: { key: string; value: unknown }[]): Record<string, Attr> {
  return Object.fromEntries(list.map((kv) => [kv.key, decodeValue(kv.value)]));
}

export interface OtlpReceiver {
  /** Base URL to give as `telemetry.otlp_endpoint`. */
  url: string;
  spans: ReceivedSpan[];
  /** Waits until `count` spans with `predicate` arrived (10 s at most); returns them all. */
  waitFor(predicate: (span: ReceivedSpan) => boolean, count: number): Promise<ReceivedSpan[]>;
  stop(): Promise<void>;
}

export function startOtlpReceiver(): OtlpReceiver {
  const spans: ReceivedSpan[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const path = new URL(request.url).pathname;
      if (request.method !== "POST" || path !== "/v1/traces")
        return new Response("not found", { status: 404 });
      if (!(request.headers.get("content-type") ?? "").includes("json"))
        return new Response("expected the OTLP JSON encoding", { status: 415 });
      const decoded = v.parse(ExportRequest, await request.json());
      for (const rs of decoded.resourceSpans) {
        const resource = attributes(rs.resource?.attributes ?? []);
        for (const ss of rs.scopeSpans) {
          for (const s of ss.spans) {
            spans.push({
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId ?? "",
              name: s.name,
              kind: s.kind,
              attributes: attributes(s.attributes),
              statusCode: s.status?.code ?? 0,
              resource,
            });
          }
        }
      }
      return Response.json({});
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    spans,
    async waitFor(predicate, count) {
      const deadline = Date.now() + 10_000;
      while (spans.filter(predicate).length < count) {
        if (Date.now() > deadline)
          throw new Error(`expected ${count} spans, got: ${spans.map((s) => s.name).join(", ")}`);
        await Bun.sleep(50);
      }
      return spans;
    },
    async stop() {
      await server.stop(true);
    },
  };
}
