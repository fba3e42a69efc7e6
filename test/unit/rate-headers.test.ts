// The rate-limit headers in each protocol's form (src/wire/rate-headers.ts, src/billing/refusal.ts):
// OpenAI's names with Go-style durations, Anthropic's with RFC 3339 times; token windows only when
// a token limit filled them in.
import { describe, expect, test } from "bun:test";
import { rateHeaders } from "../../src/billing/refusal.ts";
import { formatReset, headerFormOf, rateLimitHeaders, resetTime } from "../../src/wire/rate-headers.ts";

const NOW = Date.parse("2026-11-27T10:45:00.250Z");

describe("reset values", () => {
  test("OpenAI durations: ms under a second, seconds, then minutes and hours", () => {
    expect([0, 12, 999.2, 1000, 1500, 59_999, 60_000, 360_000, 90_500, 3_600_000].map(formatReset)).toEqual([
      "0ms",
      "12ms",
      "1s",
      "1s",
      "1.5s",
      "59.999s",
      "1m0s",
      "6m0s",
      "1m30.5s",
      "1h0m0s",
    ]);
  });

  test("Anthropic times: RFC 3339 in UTC, rounded up to the second", () => {
    expect(resetTime(NOW, 0)).toBe("2026-11-27T10:45:01Z");
    expect(resetTime(NOW, 750)).toBe("2026-11-27T10:45:01Z");
    expect(resetTime(NOW, 59_800)).toBe("2026-11-27T10:46:01Z");
    expect(Number.isNaN(Date.parse(resetTime(NOW, 1234)))).toBe(false);
  });
});

describe("the forms", () => {
  const requests = { limit: 60, remaining: 59, resetMs: 1000 };
  const tokens = { limit: 40_000, remaining: 38_500, resetMs: 6_000 };

  test("/v1/messages takes Anthropic's form, every other path OpenAI's", () => {
    expect(headerFormOf("/v1/messages")).toBe("anthropic");
    expect(headerFormOf("/v1/messages/count_tokens")).toBe("anthropic");
    for (const path of ["/v1/responses", "/v1/chat/completions", "/v1/images/generations"])
      expect(headerFormOf(path)).toBe("openai");
  });

  test("requests only: the three request headers, no token headers", () => {
    expect(rateLimitHeaders({ requests }, "openai", NOW)).toEqual({
      "x-ratelimit-limit-requests": "60",
      "x-ratelimit-remaining-requests": "59",
      "x-ratelimit-reset-requests": "1s",
    });
    expect(rateLimitHeaders({ requests }, "anthropic", NOW)).toEqual({
      "anthropic-ratelimit-requests-limit": "60",
      "anthropic-ratelimit-requests-remaining": "59",
      "anthropic-ratelimit-requests-reset": "2026-11-27T10:45:02Z",
    });
  });

  test("a tokens-per-minute window plugs in as the tokens trio (and Anthropic's input/output forms when kept apart)", () => {
    expect(rateLimitHeaders({ requests, tokens }, "openai", NOW)).toMatchObject({
      "x-ratelimit-limit-tokens": "40000",
      "x-ratelimit-remaining-tokens": "38500",
      "x-ratelimit-reset-tokens": "6s",
    });
    const anthropic = rateLimitHeaders(
      { requests, tokens, inputTokens: tokens, outputTokens: { limit: 8000, remaining: 8000, resetMs: 0 } },
      "anthropic",
      NOW,
    );
    expect(anthropic).toMatchObject({
      "anthropic-ratelimit-tokens-limit": "40000",
      "anthropic-ratelimit-tokens-remaining": "38500",
      "anthropic-ratelimit-tokens-reset": "2026-11-27T10:45:07Z",
      "anthropic-ratelimit-input-tokens-limit": "40000",
      "anthropic-ratelimit-output-tokens-limit": "8000",
      "anthropic-ratelimit-output-tokens-reset": "2026-11-27T10:45:01Z",
    });
    expect(Object.keys(anthropic)).toHaveLength(12);
  });

  test("a limiter's state: no limit, no headers; a tokens window when the limiter gives one", () => {
    expect(rateHeaders({ limit: null, remaining: null, resetMs: 0 }, "openai", NOW)).toEqual({});
    expect(
      Object.keys(rateHeaders({ limit: 10, remaining: 9, resetMs: 0 }, "anthropic", NOW)).sort(),
    ).toEqual([
      "anthropic-ratelimit-requests-limit",
      "anthropic-ratelimit-requests-remaining",
      "anthropic-ratelimit-requests-reset",
    ]);
    const withTokens = rateHeaders({ limit: 10, remaining: 9, resetMs: 0, tokens }, "openai", NOW);
    expect(withTokens["x-ratelimit-remaining-tokens"]).toBe("38500");
  });
});
