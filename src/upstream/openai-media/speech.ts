// `POST {base_url}/audio/speech` of an OpenAI-compatible server: JSON in, audio bytes (or SSE)
// out, streamed through as they come; the credential as `Authorization: Bearer`.
import { joinUrl, postUpstream } from "../http.ts";
import { bearer, type HttpChannelConfig } from "../post-text.ts";
import type { SpeechCall } from "../speech-call.ts";

export function sendOpenAISpeech(config: HttpChannelConfig, call: SpeechCall): Promise<Response> {
  return postUpstream({
    channel: config.name,
    url: joinUrl(config.base_url, "/audio/speech"),
    headers: {
      "content-type": "application/json",
      accept: call.sse ? "text/event-stream" : "*/*",
      ...bearer(call.credential),
    },
    body: JSON.stringify(call.body),
    signal: call.signal,
    abort: call.abort,
    connectMs: config.timeouts.connect_ms,
  });
}
