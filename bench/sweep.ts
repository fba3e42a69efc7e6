// The concurrency sweep and what is read off it: wrk's closed loop at each concurrency in turn
// (one rung each: req/s, p50, p99, errors), and the throughput frontier, the most req/s of any
// rung whose p99 stayed under a bound with its errors within a share. One sweep gives every
// bound's reading, so relaxing a bound can only add rungs and never lowers the reading.
import { type WrkRequest, wrk } from "./wrk.ts";

/** The p99 bounds the field reports its frontier at, in microseconds (1, 5, 10, 50 and 100 ms). */
export const FRONTIER_BOUNDS_US: readonly number[] = [1_000, 5_000, 10_000, 50_000, 100_000];

export interface Rung {
  concurrency: number;
  requests: number;
  rps: number;
  p50Us: number;
  p99Us: number;
  /** wrk's connect, read, write, timeout and non-2xx errors together. */
  errors: number;
}

export interface Reading {
  /** The p99 bound, microseconds. */
  boundUs: number;
  /** The most req/s of a qualifying rung; 0 when none qualified. */
  rps: number;
  /** The rung that gave it (the lowest concurrency on a tie); undefined when none qualified. */
  concurrency?: number;
  /** That rung's own p99 (not the bound). */
  p99Us?: number;
  /** The reading is the sweep's highest concurrency: the target may carry more than was asked. */
  atTop: boolean;
}

/** Runs wrk's closed loop at each concurrency for `seconds`, after `warmupSeconds` at the first. */
export async function concurrencySweep(
  request: WrkRequest,
  levels: readonly number[],
  seconds: number,
  warmupSeconds = 1,
): Promise<Rung[]> {
  const first = levels[0];
  if (first !== undefined) await wrk(request, { connections: first, seconds: warmupSeconds, rate: 0 });
  const rungs: Rung[] = [];
  for (const concurrency of levels) {
    const result = await wrk(request, { connections: concurrency, seconds, rate: 0 });
    rungs.push({
      concurrency,
      requests: result.requests,
      rps: result.rps,
      p50Us: result.latency_us.p50,
      p99Us: result.latency_us.p99,
      errors: result.errorCount,
    });
  }
  return rungs;
}

/**
 * The most req/s of a rung with p99 under `boundUs` and errors at most `maxErrorShare` of its
 * requests as wrk counts them (default none); a rung that completed nothing never qualifies.
 */
export function frontierAt(rungs: readonly Rung[], boundUs: number, maxErrorShare = 0): Reading {
  const qualifies = (r: Rung) =>
    r.requests > 0 && r.p99Us < boundUs && r.errors <= maxErrorShare * r.requests;
  let best: Rung | undefined;
  for (const r of rungs) {
    if (!qualifies(r)) continue;
    const better = !best || r.rps > best.rps || (r.rps === best.rps && r.concurrency < best.concurrency);
    if (better) best = r;
  }
  const top = Math.max(0, ...rungs.map((r) => r.concurrency));
  if (!best) return { boundUs, rps: 0, atTop: false };
  return {
    boundUs,
    rps: best.rps,
    concurrency: best.concurrency,
    p99Us: best.p99Us,
    atTop: best.concurrency >= top,
  };
}

/** The frontier at every bound of FRONTIER_BOUNDS_US, from one sweep (no errors allowed). */
export function frontierReadings(rungs: readonly Rung[]): Reading[] {
  return FRONTIER_BOUNDS_US.map((bound) => frontierAt(rungs, bound));
}
