// An embeddings call to one channel: the in-process simulator (through the channel's fault
// profile) or an OpenAI-style `POST {base_url}/embeddings`. Returns the upstream's Response, any
// status; the pipeline reads errors and the answer (src/pipeline/embeddings.ts).
import { simEmbeddings } from "../sim/embeddings.ts";
import { simError } from "../sim/text/errors.ts";
import type { Channel } from "./channels.ts";
import type { EmbeddingCall } from "./embedding-call.ts";
import { mediaTransport } from "./media.ts";
import { sendOpenAIEmbeddings } from "./openai-media/embeddings.ts";
import { injectorOf } from "./sim/injectors.ts";

/** Sends one embeddings call to `channel`. */
export function callEmbeddings(channel: Channel, call: EmbeddingCall): Promise<Response> {
  const config = channel.config;
  const transport = mediaTransport(channel, "embeddings");
  if (transport === "sim") {
    const request = new Request("http://sim.internal/v1/embeddings", {
      method: "POST",
      body: JSON.stringify(call.body),
      signal: call.signal,
    });
    return injectorOf(channel, call.simSeed).call(
      request,
      () => simEmbeddings(request, call.simSeed),
      (status, message) => simError("openai", status, message),
    );
  }
  if (transport === undefined || config.kind === "sim") {
    throw new Error(`channel ${config.name} (kind ${config.kind}) does not serve embeddings`);
  }
  return sendOpenAIEmbeddings(config, call);
}
