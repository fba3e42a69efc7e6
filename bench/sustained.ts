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

/** The upstream's count of answers it sent late (GET /stats of upstream.ts). */
async function delayedAnswers(upstreamStatsUrl: string): Promise<number> {
  const stats = (await (await fetch(upstreamStatsUrl)).json()) as { delayed_answers?: unknown };
  if (typeof stats.delayed_answers !== "number")
    throw new Error("the upstream's /stats has no delayed_answers");
  return stats.delayed_answers;
}

/**
 * Sweeps `levels` against the 20 ms upstream (`request.bodyFile` from writeDelayBodyFile); fails
 * when the upstream answered fewer requests late than wrk counted: the target did not pass the
 * marker on, and the figure would be an ordinary sweep's.
 */
export async function sustainedThroughput(
  request: WrkRequest,
  levels: readonly number[],
  seconds: number,
  upstreamStatsUrl: string,
): Promise<SustainedFigures> {
  const before = await delayedAnswers(upstreamStatsUrl);
  const rungs = await concurrencySweep(request, levels, seconds);
  const late = (await delayedAnswers(upstreamStatsUrl)) - before;
  const counted = rungs.reduce((sum, r) => sum + r.requests, 0);
  if (late < counted)
    throw new Error(
      `the upstream answered ${late} requests late but wrk counted ${counted}: the target did not pass on "user": "bench-delay-${SUSTAINED_DELAY_MS}"`,
    );
  return { delayMs: SUSTAINED_DELAY_MS, rungs, reading: sustainedReading(rungs) };
}
