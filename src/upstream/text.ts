// The dispatch of a text call to its channel's upstream kind: one adapter folder per kind
// (openai-responses/, openai-chat/, anthropic/, sim/), each owning its URL, headers and send. The
// switch is exhaustive over the channel-kind union, so a new kind must decide here. The adapter
// returns the upstream's raw Response; relaying happens in src/pipeline/relay, error reading in
// text-errors.ts.
import { protocolOf } from "../protocols/index.ts";
import { sendMessages } from "./anthropic/text.ts";
import type { Channel } from "./channels.ts";
import { sendChat } from "./openai-chat/text.ts";
import { sendResponses } from "./openai-responses/text.ts";
import { simChannelText } from "./sim/text.ts";
import type { TextCall, UpstreamEnv } from "./text-call.ts";

/** Sends one text call to a channel and returns the upstream's response (any status). */
export function callText(channel: Channel, call: TextCall, env: UpstreamEnv): Promise<Response> {
  const config = channel.config;
  switch (config.kind) {
    case "sim": {
      // In-process: the same handler `modelgate sim` serves, without a socket.
      const request = new Request(`http://sim.internal${protocolOf(call.protocol).path}`, {
        method: "POST",
        // The beta list decides what a Messages request may ask (an interleaved thinking budget).
        headers: call.anthropicBeta ? { "anthropic-beta": call.anthropicBeta } : {},
        body: call.body,
        signal: call.signal,
      });
      return simChannelText(channel, call.protocol, request, { seed: env.simSeed, timing: env.simTiming });
    }
    case "openai-responses":
      return sendResponses(config, call);
    case "openai-chat":
      return sendChat(channel, config, call);
    case "anthropic":
      return sendMessages(config, call);
    case "openai-images":
      throw new Error(`channel ${config.name} serves images, not text`);
    default: {
      const never: never = config;
      throw new Error(`unknown channel kind ${String(never)}`);
    }
  }
}
