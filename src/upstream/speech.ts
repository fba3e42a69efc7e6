// A speech call to one channel: the in-process simulator (through the channel's fault profile) or
// an OpenAI-style `POST {base_url}/audio/speech`. Returns the upstream's Response, any status; the
// pipeline relays its body as it arrives (src/pipeline/speech.ts).
import { simSpeech } from "../sim/speech.ts";
import { simError } from "../sim/text/errors.ts";
import type { Channel } from "./channels.ts";
import { mediaTransport } from "./media.ts";
import { sendOpenAISpeech } from "./openai-media/speech.ts";
import { injectorOf } from "./sim/injectors.ts";
import type { SpeechCall } from "./speech-call.ts";

/** Sends one speech call to `channel`. */
export function callSpeech(channel: Channel, call: SpeechCall): Promise<Response> {
  const config = channel.config;
  const transport = mediaTransport(channel, "speech");
  if (transport === "sim") {
    const request = new Request("http://sim.internal/v1/audio/speech", {
      method: "POST",
      body: JSON.stringify(call.body),
      signal: call.signal,
    });
    return injectorOf(channel, call.simSeed).call(
      request,
      () => simSpeech(request, call.simSeed),
      (status, message) => simError("openai", status, message),
    );
  }
  if (transport === undefined || config.kind === "sim") {
    throw new Error(`channel ${config.name} (kind ${config.kind}) does not serve speech`);
  }
  return sendOpenAISpeech(config, call);
}
