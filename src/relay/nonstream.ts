// The non-stream relay: the upstream's JSON answer is read whole and parsed once, for its usage
// and (when the channel spoke another protocol) for translation; otherwise its bytes are passed
// to the client unchanged.
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

export async function relayJson(
  channel: string,
  protocol: TextProtocol,
  upstream: Response,
): Promise<JsonAnswer> {
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(await upstream.arrayBuffer());
  } catch (thrown) {
    const why = thrown instanceof Error ? thrown.message : String(thrown);
    throw new GatewayError(
      "upstream_failed",
      `Channel "${channel}" broke off its answer (${why}). Retry the request.`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw new GatewayError(
      "upstream_failed",
      `Channel "${channel}" answered with malformed JSON. Retry the request.`,
    );
  }
  return { bytes, json: parsed, usage: usageOfBody(protocol, parsed) };
}
