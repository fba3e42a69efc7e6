// Reading an upstream's usage by the protocol its channel speaks (each record's readers, in the
// protocol's folder). The meter takes the counts in one convention (src/wire/text-usage.ts).
import { asObject } from "../wire/translate/convert.ts";
import type { UsageCounts } from "../wire/usage-counts.ts";
import { protocolOf, type TextProtocol } from "./index.ts";
import type { StreamUsage } from "./usage-reader.ts";

export function streamUsage(protocol: TextProtocol): StreamUsage {
  return protocolOf(protocol).usage.stream();
}

/** The usage inside a complete (non-stream) answer. */
export function answerUsage(protocol: TextProtocol, body: unknown): UsageCounts | undefined {
  const answer = asObject(body);
  return answer.ok ? protocolOf(protocol).usage.answer(answer.value) : undefined;
}
