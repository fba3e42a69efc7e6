// The one HTTP send of a text call to a channel over the network: JSON body, the accept header the
// call needs (SSE or JSON), the kind's auth headers, trace context, keep-alive fetch (http.ts).
import type { ChannelConfig } from "../config/schema.ts";
import type { Secret } from "../types.ts";
import { joinUrl, postUpstream } from "./http.ts";
import type { TextCall } from "./text-call.ts";

/** A channel reached over HTTP (every kind but the in-process simulator). */
export type HttpChannelConfig = Exclude<ChannelConfig, { kind: "sim" }>;

/** Posts `call.body` to `path` under the channel's base URL; the upstream's Response, any status. */
export function postText(
  config: HttpChannelConfig,
  path: string,
  auth: Record<string, string>,
  call: TextCall,
): Promise<Response> {
  return postUpstream({
    channel: config.name,
    url: joinUrl(config.base_url, path),
    headers: {
      "content-type": "application/json",
      accept: call.stream ? "text/event-stream" : "application/json",
      ...auth,
      ...call.traceHeaders,
    },
    body: call.body,
    signal: call.signal,
    abort: call.abort,
    connectMs: config.timeouts.connect_ms,
  });
}

/** OpenAI's auth header (Responses, Chat Completions, images): `Authorization: Bearer`. */
export function bearer(key: Secret | undefined): Record<string, string> {
  return key === undefined ? {} : { authorization: `Bearer ${key.expose()}` };
}
