// The non-stream relay: the upstream's JSON answer (read whole by the attempt, src/pipeline/call.ts)
// is parsed once, for its usage and (when the channel spoke another protocol) for translation;
// otherwise its bytes are passed to the client unchanged, unless the upstream named its own model
// (a mapped id such as `llama3.2`): the client sees the model id it asked for.
import type { UsageCounts } from "../../billing/meter.ts";
import { answerUsage } from "../../upstream/usage.ts";
import { GatewayError } from "../../wire/errors.ts";
import type { TextProtocol } from "../../wire/text-form.ts";

export interface JsonAnswer {
  bytes: Uint8Array;
  /** The parsed answer (for translation into another protocol). */
  json: unknown;
  usage: UsageCounts | undefined;
}

const decoder = new TextDecoder();

const encoder = new TextEncoder();

/** The answer's bytes with `model` set to the id the client asked for (unchanged when it already is). */
function withClientModel(bytes: Uint8Array, parsed: unknown, model: string): Uint8Array {
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return bytes;
  const answer = parsed as Record<string, unknown>;
  if (typeof answer.model !== "string" || answer.model === model) return bytes;
  return encoder.encode(JSON.stringify({ ...answer, model }));
}

export function relayJson(
  channel: string,
  protocol: TextProtocol,
  bytes: Uint8Array,
  clientModel: string,
): JsonAnswer {
  let parsed: unknown;
  try {
    parsed = JSON.parse(decoder.decode(bytes));
  } catch {
    throw new GatewayError(
      "upstream_failed",
      `Channel "${channel}" answered with malformed JSON. Retry the request.`,
    );
  }
  return {
    bytes: withClientModel(bytes, parsed, clientModel),
    json: parsed,
    usage: answerUsage(protocol, parsed),
  };
}
