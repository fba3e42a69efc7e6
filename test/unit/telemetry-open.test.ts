// With `[telemetry]` off the OpenTelemetry module is never imported; with an endpoint it is, once.
// Also the W3C traceparent check used to pass a client's trace context upstream.
import { describe, expect, spyOn, test } from "bun:test";
import * as v from "valibot";
import { ConfigError, loadConfig } from "../../src/config/load.ts";
import { TelemetryConfigSchema, tracesUrl } from "../../src/config/telemetry.ts";
import { type LoadTracer, openTracer, shownEndpoint } from "../../src/telemetry/open.ts";
import { startTracer } from "../../src/telemetry/otel.ts";
import { clientTraceHeaders } from "../../src/telemetry/propagate.ts";

function countingLoader(): { load: LoadTracer; loads: () => number } {
  let loads = 0;
  return {
    load: async () => {
      loads++;
      return import("../../src/telemetry/otel.ts");
    },
    loads: () => loads,
  };
}

describe("openTracer", () => {
  test("telemetry off: no tracer and the SDK module is not loaded", async () => {
    const loader = countingLoader();
    const tracer = await openTracer(v.parse(TelemetryConfigSchema, {}), "0.0.0", undefined, loader.load);
    expect(tracer).toBeUndefined();
    expect(loader.loads()).toBe(0);
  });

  test("an endpoint loads the SDK once and starts a tracer", async () => {
    const loader = countingLoader();
    const config = v.parse(TelemetryConfigSchema, { otlp_endpoint: "http://127.0.0.1:9/" });
    const tracer = await openTracer(config, "0.0.0", undefined, loader.load);
    expect(tracer).toBeDefined();
    expect(loader.loads()).toBe(1);
    await tracer?.shutdown();
  });

  test("credentials in the endpoint URL are not logged", async () => {
    const endpoint = "http://user:s3cret@127.0.0.1:9/v1/traces?api-key=k3y";
    const written: string[] = [];
    const spy = spyOn(process.stderr, "write").mockImplementation((chunk) => {
      written.push(String(chunk));
      return true;
    });
    try {
      const config = v.parse(TelemetryConfigSchema, { otlp_endpoint: endpoint });
      const tracer = await openTracer(config, "0.0.0", undefined, countingLoader().load);
      await tracer?.shutdown();
    } finally {
      spy.mockRestore();
    }
    const logged = written.join("");
    expect(logged).toContain("127.0.0.1:9");
    expect(logged).not.toContain("s3cret");
    expect(logged).not.toContain("k3y");
    expect(shownEndpoint(endpoint)).toBe("http://***:***@127.0.0.1:9/v1/traces?***");
  });

  test("bad settings are refused naming the field", () => {
    expect(() => v.parse(TelemetryConfigSchema, { otlp_endpoint: "grpc://x:4317" })).toThrow(/otlp_endpoint/);
    expect(() => v.parse(TelemetryConfigSchema, { sampling_ratio: 1.5 })).toThrow(/sampling_ratio/);
    expect(tracesUrl("http://c:4318/")).toBe("http://c:4318/v1/traces");
    expect(tracesUrl("http://c:4318/v1/traces")).toBe("http://c:4318/v1/traces");
  });
});

describe("clientTraceHeaders", () => {
  const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  test("a valid traceparent is kept with its tracestate", () => {
    expect(clientTraceHeaders(new Headers({ traceparent: parent, tracestate: "a=1" }))).toEqual({
      traceparent: parent,
      tracestate: "a=1",
    });
  });
  test("malformed, all-zero ids and version ff are dropped", () => {
    for (const bad of [
      "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
      "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
      "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
      "garbage",
    ])
      expect(clientTraceHeaders(new Headers({ traceparent: bad }))).toBeUndefined();
    expect(clientTraceHeaders(new Headers())).toBeUndefined();
  });
});

describe("telemetry settings from the environment and flags", () => {
  test("MODELGATE_OTLP_ENDPOINT and MODELGATE_OTLP_SAMPLING_RATIO set [telemetry]", () => {
    const env = { MODELGATE_OTLP_ENDPOINT: "http://collector:4318", MODELGATE_OTLP_SAMPLING_RATIO: "0.25" };
    const config = loadConfig({ env, flags: {} });
    expect(config.telemetry.otlp_endpoint).toBe("http://collector:4318");
    expect(config.telemetry.sampling_ratio).toBe(0.25);
    expect(loadConfig({ env: {}, flags: {} }).telemetry.otlp_endpoint).toBeUndefined();
  });

  test("--otlp-endpoint works; a ratio out of range is refused naming the setting", () => {
    const config = loadConfig({ env: {}, flags: { "otlp-endpoint": "http://c:4318" } });
    expect(config.telemetry.otlp_endpoint).toBe("http://c:4318");
    expect(() => loadConfig({ env: { MODELGATE_OTLP_SAMPLING_RATIO: "2" }, flags: {} })).toThrow(ConfigError);
    expect(() => loadConfig({ env: { MODELGATE_OTLP_SAMPLING_RATIO: "2" }, flags: {} })).toThrow(
      /sampling_ratio/,
    );
  });
});

describe("sampling", () => {
  const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
  const traced = (ratio: number) =>
    startTracer(
      v.parse(TelemetryConfigSchema, { otlp_endpoint: "http://127.0.0.1:9", sampling_ratio: ratio }),
      "0",
      undefined,
    );
  const request = (traceparent?: string) =>
    new Request("http://gw/v1/chat/completions", {
      method: "POST",
      headers: traceparent === undefined ? {} : { traceparent },
    });

  test("ratio 0: nothing recorded, yet the upstream still gets a traceparent (not sampled)", async () => {
    const tracer = traced(0);
    const trace = tracer.begin(request(), "/v1/chat/completions", "r1");
    const attempt = trace.attempt("c", 1);
    expect(attempt.headers.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
    attempt.end();
    trace.finish(200);
    await tracer.shutdown();
  });

  test("the client's sampled flag is followed: 01 traced under its trace id, 00 not sampled", async () => {
    const tracer = traced(1);
    const sampled = tracer.begin(request(`00-${TRACE}-00f067aa0ba902b7-01`), "/r", "r2").attempt("c", 1);
    expect(sampled.headers.traceparent).toMatch(new RegExp(`^00-${TRACE}-[0-9a-f]{16}-01$`));
    const unsampled = tracer.begin(request(`00-${TRACE}-00f067aa0ba902b7-00`), "/r", "r3").attempt("c", 1);
    expect(unsampled.headers.traceparent).toMatch(new RegExp(`^00-${TRACE}-[0-9a-f]{16}-00$`));
    await tracer.shutdown();
  });
});
