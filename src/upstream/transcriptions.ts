// A speech-to-text call to one channel: the in-process simulator (through the channel's fault
// profile) or an OpenAI-style multipart POST. Returns the upstream's Response, any status; the
// pipeline reads errors and relays the answer (src/pipeline/transcriptions.ts).
import { simError } from "../sim/text/errors.ts";
import { simTranscription } from "../sim/transcriptions.ts";
import type { Channel } from "./channels.ts";
import { mediaTransport } from "./media.ts";
import { sendOpenAITranscription } from "./openai-media/transcriptions.ts";
import { injectorOf } from "./sim/injectors.ts";
import { type TranscriptionCall, transcriptionForm, transcriptionPath } from "./transcription-call.ts";

/** Sends one transcription or translation call to `channel`. */
export function callTranscription(channel: Channel, call: TranscriptionCall): Promise<Response> {
  const config = channel.config;
  const endpoint = call.task === "translation" ? "translations" : "transcriptions";
  const transport = mediaTransport(channel, endpoint);
  if (transport === "sim") {
    const request = new Request(`http://sim.internal/v1${transcriptionPath(call.task)}`, {
      method: "POST",
      body: transcriptionForm(call),
      signal: call.signal,
    });
    return injectorOf(channel, call.simSeed).call(
      request,
      () => simTranscription(request, call.simSeed, call.task),
      (status, message) => simError("openai", status, message),
    );
  }
  if (transport === undefined || config.kind === "sim") {
    throw new Error(`channel ${config.name} (kind ${config.kind}) does not serve ${endpoint}`);
  }
  return sendOpenAITranscription(config, call);
}
