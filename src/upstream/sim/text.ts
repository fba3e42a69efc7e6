// The in-process simulator as a channel (kind "sim"): the same handlers `modelgate sim` serves,
// without a socket, behind the channel's own fault injector (its `profile`, injectors.ts).

import { protocolOf } from "../../protocols/index.ts";
import { simError } from "../../sim/text/errors.ts";
import type { Timing } from "../../sim/text/pace.ts";
import { simTextAnswer } from "../../sim/text/routes.ts";
import type { TextProtocol } from "../../wire/text-form.ts";
import type { Channel } from "../channels.ts";
import { injectorOf } from "./injectors.ts";

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
    (status, message) => simError(protocolOf(protocol).errorShape, status, message),
  );
}
