// The non-stream relay: the upstream's JSON answer (read whole by the attempt, src/relay/route.ts)
// is parsed once, for its usage and (when the channel spoke another protocol) for translation;
// otherwise its bytes are passed to the client unchanged.
import type { UsageCounts } from "../billing/meter.ts";
import { GatewayError } from "../wire/errors.ts";
import { usageOfBody } from "../wire/text-usage.ts";
import type { TextProtocol } from "../wire/text-view.ts";

export interface JsonAnswer {
  bytes: Uint8Array;
  /** The parsed answer (for translation into another protocol). */
  json: unknown;
  usage: UsageCounts | undefined;
}

const decoder = new TextDecoder();

export function relayJson(channel: string, protocol: TextProtocol, bytes: Uint8Array): JsonAnswer {
  let parsed: unknown;
  try {
    parsed = JSON.parse(decoder.decode(bytes));
  } catch {
    throw new GatewayError(
      "upstream_failed",
      `Channel "${channel}" answered with malformed JSON. Retry the request.`,
    );
  }
  return { bytes, json: parsed, usage: usageOfBody(protocol, parsed) };
}
