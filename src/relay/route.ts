// Choosing and calling the upstream for a text request: the channels serving the model that speak
// the client's protocol, tried in order; a later channel is tried only when an earlier one failed
// before answering (unreachable, 401/403, 429, 5xx), never once the client got a byte.
import type { ModelInfo } from "../catalog/models.ts";
import type { Gateway } from "../gateway.ts";
import type { Channel } from "../upstream/channels.ts";
import { UpstreamUnreachable } from "../upstream/http.ts";
import { callText, speaks, type TextCall, type UpstreamEnv } from "../upstream/text.ts";
import { upstreamError, worthFailover } from "../upstream/text-errors.ts";
import { GatewayError } from "../wire/errors.ts";
import type { TextProtocol } from "../wire/text-view.ts";

const PROTOCOL_NAMES: Readonly<Record<TextProtocol, string>> = {
  responses: "Responses",
  chat: "Chat Completions",
  messages: "Messages",
};

/** The channels that can serve `model` in `protocol`; 503 when there is none. */
export function channelsFor(gateway: Gateway, model: ModelInfo, protocol: TextProtocol): Channel[] {
  const all = gateway.channels.forModel(model.id);
  const usable = all.filter((c) => speaks(c, protocol));
  if (usable.length > 0) return usable;
  const why =
    all.length === 0
      ? "no configured channel serves it"
      : `its channels (${all.map((c) => c.config.name).join(", ")}) do not speak the ${PROTOCOL_NAMES[protocol]} protocol, and translation between protocols is not available yet`;
  throw new GatewayError("no_channel", `No upstream channel can serve \`${model.id}\` right now: ${why}.`, {
    retryAfterSeconds: 30,
  });
}

export function upstreamEnv(gateway: Gateway): UpstreamEnv {
  const text = gateway.config.text;
  return {
    simSeed: gateway.config.sim.seed,
    simTiming: { ttftMs: text.sim_ttft_ms, tokensPerSecond: text.sim_tokens_per_second },
    timeoutMs: text.upstream_timeout_seconds * 1000,
  };
}

export interface Answered {
  response: Response;
  channel: Channel;
}

/**
 * Calls the channels in order until one answers 2xx. `bodyFor` gives the body for a channel (its
 * model id mapped). `tried` collects the names of the channels called.
 */
export async function callChannels(
  channels: readonly Channel[],
  call: (channel: Channel) => TextCall,
  env: UpstreamEnv,
  tried: string[],
): Promise<Answered> {
  let last: GatewayError | undefined;
  for (const channel of channels) {
    tried.push(channel.config.name);
    let response: Response;
    try {
      response = await callText(channel, call(channel), env);
    } catch (thrown) {
      if (!(thrown instanceof UpstreamUnreachable)) throw thrown;
      last = thrown;
      continue;
    }
    if (response.ok) return { response, channel };
    last = await upstreamError(channel.config.name, response);
    if (!worthFailover(response.status)) break;
  }
  throw last ?? new GatewayError("no_channel", "No upstream channel is available. Retry later.");
}
