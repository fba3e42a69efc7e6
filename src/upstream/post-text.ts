// The one HTTP send of a text call to a channel over the network: JSON body, the accept header the
// call needs (SSE or JSON), the kind's auth headers, trace context, keep-alive fetch (http.ts).

import type { Secret } from "../base/types.ts";
import type { ChannelConfig } from "../config/schema.ts";
import { joinUrl, postUpstream } from "./http.ts";
import type { TextCall } from "./text-call.ts";

/** A channel reached over HTTP (every kind but the in-process simulator). */
export type HttpChannelConfig = Exclude<ChannelConfig, { kind: "sim" }>;

/** Joined URLs by base URL and path: both come from the configuration, so there are few. */
const urls = new Map<string, Map<string, string>>();

/** `joinUrl` made once per base URL and path, not a string per call. */
function urlOf(base: string, path: string): string {
  let paths = urls.get(base);
  if (paths === undefined) {
    paths = new Map();
    urls.set(base, paths);
  }
  let url = paths.get(path);
  if (url === undefined) {
    url = joinUrl(base, path);
    paths.set(path, url);
  }
  return url;
}

/**
 * Posts `body` (the call's own by default: a dialect may bend it) to `path` under the channel's
 * base URL; the upstream's Response, any status.
 */
export function postText(
  config: HttpChannelConfig,
  path: string,
  auth: Readonly<Record<string, string>>,
  call: TextCall,
  body: string | Uint8Array = call.body,
): Promise<Response> {
  return postUpstream({
    channel: config.name,
    url: urlOf(config.base_url, path),
    headers: {
      "content-type": "application/json",
      accept: call.stream ? "text/event-stream" : "application/json",
      ...auth,
      ...call.traceHeaders,
    },
    body,
    signal: call.signal,
    abort: call.abort,
    connectMs: config.timeouts.connect_ms,
  });
}

const NO_AUTH: Readonly<Record<string, string>> = {};
/**
 * Each credential's header by its value, made on its first call: a channel's credentials are few
 * (read from the environment per call, so a changed key is a new entry; the map is bounded).
 */
const bearers = new Map<string, Readonly<Record<string, string>>>();

/** OpenAI's auth header (Responses, Chat Completions, images): `Authorization: Bearer`. Read, never changed. */
export function bearer(key: Secret | undefined): Readonly<Record<string, string>> {
  if (key === undefined) return NO_AUTH;
  const value = key.expose();
  let header = bearers.get(value);
  if (header === undefined) {
    if (bearers.size >= 1024) bearers.clear();
    header = { authorization: `Bearer ${value}` };
    bearers.set(value, header);
  }
  return header;
}
