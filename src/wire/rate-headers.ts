// The rate-limit headers of an answer, in the form of the protocol the client speaks: OpenAI's
// `x-ratelimit-{limit,remaining,reset}-{requests,tokens}` (reset as a Go-style duration: `850ms`,
// `1s`, `6m0s`) on the OpenAI-protocol endpoints, Anthropic's
// `anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining,reset}` (reset
// as an RFC 3339 time) on /v1/messages. A window's headers are sent only when that limit is
// configured: requests always have one (`--rpm` or `[billing] default_rpm`); the token windows are
// filled in by a tokens-per-minute limit when one applies to the key, and absent otherwise.

/** One limit's window as the headers report it. */
export interface LimitWindow {
  limit: number;
  remaining: number;
  /** Milliseconds until the window is full again (0 when nothing in it counts). */
  resetMs: number;
}

/** The windows that apply to a request; an absent one is not limited and has no headers. */
export interface RateFigures {
  requests?: LimitWindow | undefined;
  /** Input plus output tokens per window (a tokens-per-minute limit). */
  tokens?: LimitWindow | undefined;
  /** Anthropic's separate input and output token limits, when the gateway keeps them apart. */
  inputTokens?: LimitWindow | undefined;
  outputTokens?: LimitWindow | undefined;
}

/** Which protocol's header names: the client's, from its path. */
export type HeaderForm = "openai" | "anthropic";

/** The form of the endpoint at `path`: Anthropic's for /v1/messages, OpenAI's elsewhere. */
export function headerFormOf(path: string): HeaderForm {
  return path.startsWith("/v1/messages") ? "anthropic" : "openai";
}

/** `850ms`, `1s`, `59.999s`, `6m0s`, `1h0m0s`: the duration style of OpenAI's reset headers. */
export function formatReset(ms: number): string {
  const whole = Math.max(0, Math.ceil(ms));
  if (whole < 1000) return `${whole}ms`;
  if (whole < 60_000) return `${whole / 1000}s`;
  const hours = Math.floor(whole / 3_600_000);
  const minutes = Math.floor((whole - hours * 3_600_000) / 60_000);
  const seconds = (whole - hours * 3_600_000 - minutes * 60_000) / 1000;
  return hours > 0 ? `${hours}h${minutes}m${seconds}s` : `${minutes}m${seconds}s`;
}

/** `2026-11-27T10:45:01Z`: when a window is full again, to the second (rounded up), as Anthropic sends it. */
export function resetTime(now: number, resetMs: number): string {
  const at = Math.ceil((now + Math.max(0, resetMs)) / 1000) * 1000;
  return new Date(at).toISOString().replace(/\.\d{3}Z$/, "Z");
}

const OPENAI_WINDOWS = [
  ["requests", "requests"],
  ["tokens", "tokens"],
] as const;

const ANTHROPIC_WINDOWS = [
  ["requests", "requests"],
  ["tokens", "tokens"],
  ["inputTokens", "input-tokens"],
  ["outputTokens", "output-tokens"],
] as const;

/** The headers of `figures` in `form`; `now` (ms since the epoch) dates Anthropic's reset times. */
export function rateLimitHeaders(
  figures: RateFigures,
  form: HeaderForm,
  now: number,
): Record<string, string> {
  const headers: Record<string, string> = {};
  if (form === "openai") {
    for (const [field, name] of OPENAI_WINDOWS) {
      const window = figures[field];
      if (window === undefined) continue;
      headers[`x-ratelimit-limit-${name}`] = String(window.limit);
      headers[`x-ratelimit-remaining-${name}`] = String(window.remaining);
      headers[`x-ratelimit-reset-${name}`] = formatReset(window.resetMs);
    }
    return headers;
  }
  for (const [field, name] of ANTHROPIC_WINDOWS) {
    const window = figures[field];
    if (window === undefined) continue;
    headers[`anthropic-ratelimit-${name}-limit`] = String(window.limit);
    headers[`anthropic-ratelimit-${name}-remaining`] = String(window.remaining);
    headers[`anthropic-ratelimit-${name}-reset`] = resetTime(now, window.resetMs);
  }
  return headers;
}
