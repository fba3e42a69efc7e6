// `POST {base_url}/audio/transcriptions` (or `/audio/translations`) of an OpenAI-compatible
// server: multipart with the file part typed as what it is, the credential as `Authorization:
// Bearer`; SSE asked for when the call streams.
import { joinUrl, postUpstream } from "../http.ts";
import { bearer, type HttpChannelConfig } from "../post-text.ts";
import { type TranscriptionCall, transcriptionForm, transcriptionPath } from "../transcription-call.ts";

export function sendOpenAITranscription(
  config: HttpChannelConfig,
  call: TranscriptionCall,
): Promise<Response> {
  return postUpstream({
    channel: config.name,
    url: joinUrl(config.base_url, transcriptionPath(call.task)),
    headers: { accept: call.stream ? "text/event-stream" : "*/*", ...bearer(call.credential) },
    body: transcriptionForm(call),
    signal: call.signal,
    abort: call.abort,
    connectMs: config.timeouts.connect_ms,
  });
}
