// Which upstream protocol a channel is called in for a client's protocol, and the channels that
// can serve a text request. Every text channel can serve every client protocol: a channel that
// does not speak the client's protocol is called in its own, and the request and answer are
// translated (src/wire/translate). Channels that need no translation are tried first, each group
// keeping the order the channel table gives (priority, weight).
import type { ModelInfo } from "../catalog/models.ts";
import type { Gateway } from "../gateway.ts";
import type { Channel } from "../upstream/channels.ts";
import { GatewayError } from "../wire/errors.ts";
import type { TextProtocol } from "../wire/text-form.ts";

/** The protocol `channel` is called in for a client speaking `client`; undefined if it serves no text. */
export function upstreamProtocol(channel: Channel, client: TextProtocol): TextProtocol | undefined {
  const kind = channel.config.kind;
  switch (kind) {
    case "sim":
      return client;
    case "openai-responses":
      return "responses";
    case "openai-chat":
      return "chat";
    case "anthropic":
      return "messages";
    case "openai-images":
      return undefined;
    default: {
      const never: never = kind;
      throw new Error(`unknown channel kind ${String(never)}`);
    }
  }
}

/**
 * The channels that can serve `model` for a `protocol` client, native speakers first. None
 * configured is the operator's configuration, not an outage: 404 `model_not_served`, no retry.
 */
export function textChannelsFor(gateway: Gateway, model: ModelInfo, protocol: TextProtocol): Channel[] {
  const native: Channel[] = [];
  const translated: Channel[] = [];
  for (const channel of gateway.channels.forModel(model.id)) {
    const speaks = upstreamProtocol(channel, protocol);
    if (speaks === protocol) native.push(channel);
    else if (speaks !== undefined) translated.push(channel);
  }
  if (translated.length === 0 && native.length > 0) return native;
  if (native.length + translated.length > 0) return native.concat(translated);
  throw new GatewayError("model_not_served", notServed(model.id, "text"));
}

/** What the operator changes when no configured channel serves a catalog model. */
export function notServed(model: string, family: "text" | "images"): string {
  return `The model \`${model}\` is in the catalog but no ${family} channel of this gateway's configuration serves it: add it to the \`models\` of a [[channels]] entry in the gateway's configuration file (or choose another model).`;
}

/**
 * A media endpoint (embeddings, transcriptions, translations, speech) for which no configured
 * channel serves `model`: 503 `no_channel`, the one message of every media run.
 */
export function noMediaChannel(model: string, endpoint: string): GatewayError {
  return new GatewayError(
    "no_channel",
    `No upstream channel serves \`${model}\` ${endpoint}: configure a sim or OpenAI-compatible channel for it.`,
    { retryAfterSeconds: 30 },
  );
}
