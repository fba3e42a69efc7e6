// What a client is told about limits: the rate-limit headers every admitted answer carries (in its
// protocol's form, src/wire/rate-headers.ts), and the 429 for each refusal with Retry-After /
// retry-after-ms and a message that says what to do.

import { formatUsd } from "../base/money.ts";
import type { Nanos } from "../base/types.ts";
import type { RateState, Refusal, RefusalFacts } from "../limits/limiter.ts";
import { GatewayError } from "../wire/errors.ts";
import { formatReset, type HeaderForm, rateLimitHeaders } from "../wire/rate-headers.ts";

/**
 * The rate-limit headers of a limiter's answer, in the client's protocol's form: the requests
 * window, and the tokens window when a tokens-per-minute limit filled it in.
 */
export function rateHeaders(rate: RateState, form: HeaderForm, now: number): Record<string, string> {
  const requests =
    rate.limit === null || rate.remaining === null
      ? undefined
      : { limit: rate.limit, remaining: rate.remaining, resetMs: rate.resetMs };
  return rateLimitHeaders({ requests, tokens: rate.tokens }, form, now);
}

export interface RefusalContext {
  /** The client's protocol, for the rate-limit headers' form; and the time they are dated from. */
  form: HeaderForm;
  now: number;
  keyName: string;
  accountName: string;
  worstCase: Nanos;
  /** When the billing day resets, as an ISO time (daily cap refusals). */
  dayEnd: string;
  /** The request's worst case in tokens (token rate refusals). */
  tokens?: number;
}

function message(refusal: Refusal, facts: RefusalFacts, ctx: RefusalContext, waitMs: number): string {
  const wait = formatReset(waitMs);
  switch (refusal) {
    case "rate_limit_exceeded":
      return `Rate limit reached for API key "${ctx.keyName}": ${facts.limit} requests per minute. Retry after ${wait}, or ask the operator for a higher --rpm.`;
    case "token_rate_limit_exceeded":
      return ctx.tokens !== undefined && ctx.tokens > facts.limit
        ? `This request may use up to ${ctx.tokens} tokens (its counted prompt plus its output cap), more than the ${facts.limit} tokens per minute API key "${ctx.keyName}" or its account may use. Lower max_output_tokens (or the prompt), or ask the operator for a higher tokens-per-minute limit.`
        : `Token rate limit reached for API key "${ctx.keyName}": ${facts.limit} tokens per minute, and this request may use up to ${ctx.tokens ?? 0} (its counted prompt plus its output cap). Retry after ${wait}, lower max_output_tokens, or ask the operator for a higher tokens-per-minute limit.`;
    case "budget_exceeded": {
      const budget = facts.budget;
      const period = budget?.period ?? "";
      const owner = budget?.name.startsWith("a:")
        ? `account "${ctx.accountName}"`
        : `API key "${ctx.keyName}"`;
      const resets =
        period === "total" || budget === undefined
          ? "It does not reset: ask the operator to raise or remove it."
          : `It resets at ${new Date(budget.end).toISOString()} (in ${wait}).`;
      return `The ${period} budget of ${owner} (${formatUsd(facts.limit)} USD) is reached: spent ${formatUsd(facts.spent)} USD in this period and ${formatUsd(facts.reserved)} USD reserved by requests in flight, and this request may cost up to ${formatUsd(ctx.worstCase)} USD. ${resets} Lower max_output_tokens / n to reserve less.`;
    }
    case "concurrency_limit_exceeded":
      return `Too many concurrent requests for API key "${ctx.keyName}": at most ${facts.limit} may be in flight. Retry when one of them has finished, or ask the operator for a higher --concurrency.`;
    case "insufficient_quota":
      return `The balance of account "${ctx.accountName}" (${formatUsd(facts.balance)} USD, of which ${formatUsd(facts.reserved)} USD is reserved by requests in flight) cannot cover this request's worst-case cost of ${formatUsd(ctx.worstCase)} USD. Credit the account, or lower max_output_tokens / n to reserve less.`;
    case "daily_quota_exceeded":
      return `The daily cap of API key "${ctx.keyName}" (${formatUsd(facts.limit)} USD) is reached: spent ${formatUsd(facts.spent)} USD today and ${formatUsd(facts.reserved)} USD reserved by requests in flight, and this request may cost up to ${formatUsd(ctx.worstCase)} USD. The cap resets at ${ctx.dayEnd} (in ${wait}); lower max_output_tokens / n to reserve less.`;
  }
}

/** The 429 for a refusal, carrying the rate headers too. */
export function refusalError(
  refusal: Refusal,
  facts: RefusalFacts,
  retryAfterMs: number,
  rate: RateState,
  ctx: RefusalContext,
): GatewayError {
  const headers = rateHeaders(rate, ctx.form, ctx.now);
  // Money refusals do not pass by retrying soon: tell SDKs not to burn their retries on them.
  const money =
    refusal === "insufficient_quota" || refusal === "daily_quota_exceeded" || refusal === "budget_exceeded";
  if (money) headers["x-should-retry"] = "false";
  const kind = money ? "quota_exceeded" : "rate_limited";
  return new GatewayError(kind, message(refusal, facts, ctx, retryAfterMs), {
    // A token rate refusal is a rate limit to the client (OpenAI answers both with this code).
    code: refusal === "token_rate_limit_exceeded" ? "rate_limit_exceeded" : refusal,
    retryAfterSeconds: Math.max(1, retryAfterMs) / 1000,
    headers,
  });
}
