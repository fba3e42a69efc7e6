// Retryability is decided in one place, the error table (src/wire/errors.ts): an upstream's answer
// becomes an error kind (src/upstream/text-errors.ts) and the kind says whether another attempt
// may help — the upstream's fault (401/403 credential, 429, 5xx) yes, the request's (4xx) no.
import { expect, test } from "bun:test";
import { upstreamError } from "../../src/upstream/text-errors.ts";
import { GatewayError } from "../../src/wire/errors.ts";

const answer = (status: number) =>
  new Response(JSON.stringify({ error: { message: `status ${status}` } }), { status });

test("the upstream's failures are retryable, the request's are not", async () => {
  const retryable: Record<number, boolean> = {};
  for (const status of [400, 401, 403, 404, 413, 422, 429, 500, 502, 503, 504]) {
    retryable[status] = (await upstreamError("c", "chat", answer(status))).retryable;
  }
  expect(retryable).toEqual({
    400: false,
    401: true,
    403: true,
    404: false,
    413: false,
    422: false,
    429: true,
    500: true,
    502: true,
    503: true,
    504: true,
  });
});

test("timeouts retry, the gateway's own refusals do not; headers added keep the cause", () => {
  expect(new GatewayError("upstream_timeout", "t").retryable).toBe(true);
  expect(new GatewayError("no_channel", "n").retryable).toBe(false);
  expect(new GatewayError("invalid_request", "i").retryable).toBe(false);
  const cause = new Error("socket closed");
  const error = new GatewayError("upstream_failed", "u", { code: "upstream_failed", cause });
  const withHeaders = error.withHeaders({ "x-ratelimit-limit-requests": "10" });
  expect(withHeaders.cause).toBe(cause);
  expect(withHeaders.headers).toEqual({ "x-ratelimit-limit-requests": "10" });
  expect(withHeaders.toOpenAI()).toEqual(error.toOpenAI());
});
