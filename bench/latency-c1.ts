// Latency at concurrency 1: one connection sending its next request as soon as the answer is in
// (wrk's closed loop, one connection), p50 and p99 over the phase. Added latency subtracts
// direct's figures (added.ts).
import type { C1Latency } from "./added.ts";
import { type WrkRequest, wrk } from "./wrk.ts";

export async function latencyAtConcurrencyOne(request: WrkRequest, seconds: number): Promise<C1Latency> {
  await wrk(request, { connections: 1, seconds: 1, rate: 0 });
  const result = await wrk(request, { connections: 1, seconds, rate: 0 });
  return {
    requests: result.requests,
    errors: result.errorCount,
    p50Us: result.latency_us.p50,
    p99Us: result.latency_us.p99,
  };
}
