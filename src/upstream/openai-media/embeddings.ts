// `POST {base_url}/embeddings` of an OpenAI-compatible server: JSON in, JSON out, the channel's
// credential as `Authorization: Bearer` (none for local servers that take none).

import type { EmbeddingCall } from "../embedding-call.ts";
import { joinUrl, postUpstream } from "../http.ts";
import { bearer, type HttpChannelConfig } from "../post-text.ts";

export function sendOpenAIEmbeddings(config: HttpChannelConfig, call: EmbeddingCall): Promise<Response> {
  return postUpstream({
    channel: config.name,
    url: joinUrl(config.base_url, "/embeddings"),
    headers: { "content-type": "application/json", accept: "application/json", ...bearer(call.credential) },
    body: JSON.stringify(call.body),
    signal: call.signal,
    abort: call.abort,
    connectMs: config.timeouts.connect_ms,
  });
}
