// The one place text adapters touch upstream HTTP: a POST with a header timeout. Bun's fetch keeps
// a keep-alive pool per origin; the caller's signal cancels the request and its body stream.
import type { ChannelConfig } from "../config/schema.ts";
import { GatewayError } from "../wire/errors.ts";
import type { TextCall, UpstreamEnv } from "./text.ts";

type HttpChannel = Extract<ChannelConfig, { base_url: string }>;

/** Raised when the upstream could not be reached or did not answer in time. */
export class UpstreamUnreachable extends GatewayError {}

export async function postUpstream(
  channel: HttpChannel,
  path: string,
  auth: Record<string, string>,
  call: TextCall,
  env: UpstreamEnv,
): Promise<Response> {
  const url = `${channel.base_url.replace(/\/+$/, "")}${path}`;
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), env.timeoutMs);
  try {
    return await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: call.stream ? "text/event-stream" : "application/json",
        ...auth,
      },
      body: call.body,
      signal: AbortSignal.any([call.signal, timeout.signal]),
      decompress: true,
    });
  } catch (thrown) {
    if (call.signal.aborted) throw thrown;
    if (timeout.signal.aborted) {
      throw new UpstreamUnreachable(
        "upstream_timeout",
        `Channel "${channel.name}" did not answer within ${Math.round(env.timeoutMs / 1000)} s. Retry later.`,
      );
    }
    throw new UpstreamUnreachable(
      "upstream_failed",
      `Channel "${channel.name}" could not be reached (${thrown instanceof Error ? thrown.message : String(thrown)}). Retry later.`,
    );
  } finally {
    clearTimeout(timer);
  }
}
