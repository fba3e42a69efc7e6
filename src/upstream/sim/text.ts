// The in-process simulator as a channel (kind "sim"): the same handlers `modelgate sim` serves,
// without a socket, behind the channel's own fault injector (its `profile`), whose counters tests
// and operators read through simChannelStats().

import { FaultInjector, type SimStats } from "../../sim/faults.ts";
import { NO_FAULTS } from "../../sim/server.ts";
import { simError } from "../../sim/text/errors.ts";
import type { Timing } from "../../sim/text/pace.ts";
import { simTextAnswer } from "../../sim/text/routes.ts";
import type { TextProtocol } from "../../wire/text-form.ts";
import type { Channel } from "../channels.ts";

const injectors = new Map<string, FaultInjector>();

function injectorOf(channel: Channel, seed: number): FaultInjector {
  const found = injectors.get(channel.name);
  if (found) return found;
  const profile = channel.config.kind === "sim" ? (channel.config.profile ?? NO_FAULTS) : NO_FAULTS;
  const made = new FaultInjector(profile, seed);
  injectors.set(channel.name, made);
  return made;
}

/** Answers a text call on an in-process sim channel, through its fault profile. */
export function simChannelText(
  channel: Channel,
  protocol: TextProtocol,
  request: Request,
  options: { seed: number; timing: Timing },
): Promise<Response> {
  return injectorOf(channel, options.seed).call(
    request,
    (shape) =>
      simTextAnswer(protocol, request, {
        seed: options.seed,
        timing: shape.timing ?? options.timing,
        dropAfter: shape.dropAfter,
      }),
    (status, message) => simError(protocol, status, message),
  );
}

/** The counters of an in-process sim channel (undefined before its first call). */
export function simChannelStats(name: string): SimStats | undefined {
  return injectors.get(name)?.stats();
}
