// W3C trace context from clients: a well-formed `traceparent` (and its `tracestate`) is passed on
// to the upstream unchanged when this gateway does not trace, so a client's trace still joins the
// upstream's; when it does trace, the attempt span's own context is sent instead (src/telemetry/otel.ts).

/** version-traceid-parentid-flags, lower-case hex, neither id all zeros (W3C Trace Context §3.2). */
const TRACEPARENT = /^[0-9a-f]{2}-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/;

/** The client's trace-context headers, or undefined when it sent no valid `traceparent`. */
export function clientTraceHeaders(headers: Headers): Record<string, string> | undefined {
  const parent = headers.get("traceparent");
  if (parent === null || parent.startsWith("ff") || !TRACEPARENT.test(parent)) return undefined;
  const state = headers.get("tracestate");
  return state === null ? { traceparent: parent } : { traceparent: parent, tracestate: state };
}
