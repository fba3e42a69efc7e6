// The edge's one report of an error answer, HTTP and WebSocket alike: the line is logged at the
// level the error table gives the kind, with the cause kept; the kind is counted; and the
// WebSocket error frame is rendered from the same table as the HTTP answer.
import { afterEach, expect, spyOn, test } from "bun:test";
import { setLogFormat, setLogLevel } from "../../src/base/log.ts";
import type { Gateway } from "../../src/gateway.ts";
import { failureOf, report } from "../../src/http/edge.ts";
import { type ErrorKind, errorFrame, errorResponse, GatewayError } from "../../src/wire/errors.ts";

afterEach(() => setLogLevel("info"));

function reported(
  error: GatewayError,
  lined = false,
): { lines: Record<string, unknown>[]; counted: unknown[][] } {
  const counted: unknown[][] = [];
  const gateway = {
    traffic: { error: (...args: unknown[]) => counted.push(args) },
  } as unknown as Gateway;
  const written: string[] = [];
  const spy = spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  });
  try {
    report(error, undefined, gateway, lined);
  } finally {
    spy.mockRestore();
  }
  return { lines: written.map((w) => JSON.parse(w) as Record<string, unknown>), counted };
}

test("each kind is logged at its table level and counted by kind", () => {
  setLogFormat("json");
  setLogLevel("debug");
  const cases: [ErrorKind, string][] = [
    ["invalid_request", "debug"],
    ["invalid_api_key", "info"],
    ["ip_not_allowed", "warn"],
    ["upstream_failed", "warn"],
    ["limiter_unavailable", "error"],
  ];
  for (const [kind, level] of cases) {
    const error = new GatewayError(kind, `a ${kind}`);
    expect(error.level).toBe(level as GatewayError["level"]);
    const { lines, counted } = reported(error);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level, kind, status: error.status });
    expect(counted).toEqual([[kind, error.status, error.code]]);
  }
});

test("after the request's access line, a refusal's report is debug detail; a gateway bug keeps its level", () => {
  setLogFormat("json");
  setLogLevel("debug");
  for (const kind of [
    "invalid_api_key",
    "ip_not_allowed",
    "upstream_failed",
    "limiter_unavailable",
  ] as const) {
    const { lines, counted } = reported(new GatewayError(kind, `a ${kind}`), true);
    expect(lines).toEqual([expect.objectContaining({ level: "debug", kind })]);
    expect(counted).toHaveLength(1);
  }
  const bug = reported(new GatewayError("internal", "a bug"), true);
  expect(bug.lines).toEqual([expect.objectContaining({ level: "error", kind: "internal" })]);
});

test("an unexpected failure is logged at error with its cause chain; the client sees none of it", async () => {
  setLogFormat("json");
  const thrown = new TypeError("socket exploded", { cause: new Error("root cause") });
  const error = failureOf(thrown, undefined);
  expect(error.kind).toBe("internal");
  expect(error.cause).toBe(thrown);
  const { lines } = reported(error);
  expect(lines[0]).toMatchObject({ level: "error", kind: "internal", status: 500 });
  expect(String(lines[0]?.error)).toContain("TypeError: socket exploded");
  expect(String(lines[0]?.error)).toContain("caused by: Error: root cause");
  const body = (await errorResponse(error, "openai", "req_1").json()) as { error: { message: string } };
  expect(body.error.message).not.toContain("socket exploded");
});

test("below the log level nothing is written, yet the error is still counted", () => {
  const { lines, counted } = reported(new GatewayError("invalid_request", "bad field"));
  expect(lines).toEqual([]);
  expect(counted).toHaveLength(1);
});

test("the WebSocket error frame carries the table's status, OpenAI type and code, like the HTTP body", async () => {
  const error = new GatewayError("invalid_request", "Unsupported frame type", { code: "unsupported_frame" });
  const frame = errorFrame(error);
  expect(frame).toEqual({
    type: "error",
    status: 400,
    error: {
      type: "invalid_request_error",
      code: "unsupported_frame",
      message: "Unsupported frame type",
      param: null,
    },
  });
  const http = (await errorResponse(error, "openai", "req_1").json()) as ReturnType<GatewayError["toOpenAI"]>;
  expect(frame.error).toEqual(http.error);
  const limited = errorFrame(new GatewayError("rate_limited", "slow down"));
  expect(limited).toMatchObject({ status: 429, error: { type: "requests", code: "rate_limit_exceeded" } });
});
