// Maps an upstream's error answer to a GatewayError the client sees in its own protocol: the
// upstream's message (read by the record of the protocol it speaks, src/protocols/<name>/errors.ts)
// is kept, the status chosen for the client's point of view.
// Whether the failure is worth another attempt follows from the kind (the error table,
// src/wire/errors.ts): 401/403, 429 and 5xx are; the request's own faults (other 4xx) are not.
import { protocolOf, type TextProtocol } from "../protocols/index.ts";
import { GatewayError } from "../wire/errors.ts";

function messageOf(protocol: TextProtocol, text: string): string {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: the raw text, shortened.
  }
  // The message inside an error body, read by the record of the protocol the channel speaks.
  const message = body === undefined ? undefined : protocolOf(protocol).errorMessage(body);
  return message || text.slice(0, 300) || "(empty body)";
}

function retryAfter(headers: Headers): number | undefined {
  const ms = Number(headers.get("retry-after-ms"));
  if (Number.isFinite(ms) && ms > 0) return ms / 1000;
  const s = Number(headers.get("retry-after"));
  return Number.isFinite(s) && s > 0 ? s : undefined;
}

/** The client-facing error for an upstream's non-2xx answer in `protocol`. */
export async function upstreamError(
  channel: string,
  protocol: TextProtocol,
  response: Response,
): Promise<GatewayError> {
  const status = response.status;
  const message = messageOf(protocol, await response.text().catch(() => ""));
  const said = `channel "${channel}" answered ${status}: ${message}`;
  if (status === 401 || status === 403) {
    return new GatewayError(
      "upstream_failed",
      `The upstream refused the gateway's credential (${said}). This is not your key's fault; the operator must check the channel's api_key_env.`,
      { code: "upstream_auth_failed" },
    );
  }
  if (status === 429) {
    const wait = retryAfter(response.headers);
    return new GatewayError("rate_limited", `The upstream is rate limiting (${said}). Back off and retry.`, {
      code: "upstream_rate_limited",
      ...(wait === undefined ? {} : { retryAfterSeconds: wait }),
    });
  }
  if (status === 413)
    return new GatewayError("too_large", `The upstream found the request too large (${said}).`);
  if (status === 422) return new GatewayError("invalid_value", `The upstream rejected a value (${said}).`);
  if (status >= 400 && status < 500) {
    return new GatewayError(
      "invalid_request",
      `The upstream rejected the request (${said}). Fix the request and retry.`,
    );
  }
  return new GatewayError("upstream_failed", `The upstream failed (${said}). Retry later.`);
}
