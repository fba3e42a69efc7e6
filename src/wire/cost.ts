// How an answer tells the client what it cost, once settled: a non-stream answer in a response
// header, a streamed one in an SSE comment line at its end (after the last event: every SSE parser
// skips a line that starts with ":", so no client's stream reading changes). Both carry the
// settled cost in USD as an exact decimal (nano-USD, trailing zeros trimmed).
import { formatUsd } from "../base/money.ts";
import type { Nanos } from "../base/types.ts";

/** The response header of a non-stream answer (and of an error after admission). */
export const COST_HEADER = "x-modelgate-cost-usd";

/** The header's value: `0.000125`, `0.00`. */
export function costText(cost: Nanos): string {
  return formatUsd(cost);
}

const encoder = new TextEncoder();

/** The SSE comment a stream ends with: `: x-modelgate-cost-usd 0.000125`, then a blank line. */
export function costComment(cost: Nanos): Uint8Array {
  return encoder.encode(`: ${COST_HEADER} ${formatUsd(cost)}\n\n`);
}
