// Sustained throughput behind a slow model: the upstream answers each non-stream request after
// 20 ms (`"user": "bench-delay-20"`), so a target must hold many requests in flight at once; a
// concurrency sweep against it, read at p99 under 1 s with under 0.1 % errors.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { delayBody } from "./requests.ts";
import { concurrencySweep, frontierAt, type Reading, type Rung } from "./sweep.ts";
import type { WrkRequest } from "./wrk.ts";

export const SUSTAINED_DELAY_MS = 20;
export const SUSTAINED_P99_US = 1_000_000;
export const SUSTAINED_MAX_ERROR_SHARE = 0.001;

export interface SustainedFigures {
  delayMs: number;
  rungs: Rung[];
  reading: Reading;
}

/** The most req/s a sweep of these rungs carried with p99 < 1 s and < 0.1 % errors. */
export function sustainedReading(rungs: readonly Rung[]): Reading {
  return frontierAt(rungs, SUSTAINED_P99_US, SUSTAINED_MAX_ERROR_SHARE);
}

/** Writes the delayed request's body where wrk reads it; returns the path. */
export function writeDelayBodyFile(dir: string): string {
  const file = join(dir, `delay-${SUSTAINED_DELAY_MS}-body.json`);
  writeFileSync(file, delayBody(SUSTAINED_DELAY_MS));
  return file;
}

/** Sweeps `levels` against the 20 ms upstream (`request.bodyFile` from writeDelayBodyFile). */
export async function sustainedThroughput(
  request: WrkRequest,
  levels: readonly number[],
  seconds: number,
): Promise<SustainedFigures> {
  const rungs = await concurrencySweep(request, levels, seconds);
  // A target that dropped the request's `user` reached an upstream that answered at once.
  const quick = rungs.find((r) => r.requests > 0 && r.p50Us < SUSTAINED_DELAY_MS * 1000);
  if (quick)
    throw new Error(
      `p50 ${(quick.p50Us / 1000).toFixed(1)} ms at c=${quick.concurrency} is under the upstream's ${SUSTAINED_DELAY_MS} ms: the target did not pass on "user": "bench-delay-${SUSTAINED_DELAY_MS}"`,
    );
  return { delayMs: SUSTAINED_DELAY_MS, rungs, reading: sustainedReading(rungs) };
}
