// Webhook delivery: a JSON POST signed with HMAC-SHA256 over `<timestamp>.<body>`, so a receiver
// can check both who sent it and that it is fresh (reject timestamps older than a few minutes).
import { createHmac, timingSafeEqual } from "node:crypto";

export const SIGNATURE_HEADER = "modelgate-signature";
export const TIMESTAMP_HEADER = "modelgate-timestamp";

/** `sha256=<hex HMAC-SHA256 of "<timestamp>.<body>" keyed by the channel secret>`. */
export function sign(secret: string, timestamp: number, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")}`;
}

/** What a receiver does: recompute and compare in constant time. */
export function verify(secret: string, timestamp: string, body: string, signature: string): boolean {
  const expected = Buffer.from(sign(secret, Number(timestamp), body));
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

export interface AttemptResult {
  ok: boolean;
  status: number | null;
  error: string | null;
}

/** One POST attempt; any 2xx is success. Never throws. */
export async function postWebhook(
  url: string,
  secret: string | null,
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<AttemptResult> {
  const timestamp = Math.floor(Date.now() / 1000);
  const signed: Record<string, string> = {
    "content-type": "application/json",
    "user-agent": "modelgate-webhook/1",
    [TIMESTAMP_HEADER]: String(timestamp),
    ...headers,
  };
  if (secret) signed[SIGNATURE_HEADER] = sign(secret, timestamp, body);
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: signed,
      body,
      redirect: "manual",
      signal: AbortSignal.timeout(timeoutMs),
    });
    await response.arrayBuffer().catch(() => undefined);
    const ok = response.status >= 200 && response.status < 300;
    return { ok, status: response.status, error: ok ? null : `receiver answered ${response.status}` };
  } catch (error) {
    return { ok: false, status: null, error: error instanceof Error ? error.message : String(error) };
  }
}
