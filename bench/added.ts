// What a target adds over the upstream alone, the field's way: its percentile minus direct's
// percentile, each measured in the same run (p99 − p99, not the p99 of per-request differences,
// which one cannot pair). Pure arithmetic, no I/O.
import type { FrameFigures } from "./frames.ts";

export interface C1Latency {
  requests: number;
  errors: number;
  p50Us: number;
  p99Us: number;
}

export interface AddedLatency {
  p50Us: number;
  p99Us: number;
}

export interface AddedFrames {
  /** Time to first frame, p50, ms. */
  ttffP50Ms: number;
  /** Inter-frame gap p50 and p99, ms. */
  gapP50Ms: number;
  gapP99Ms: number;
}

/** Gateway p50 and p99 at concurrency 1 minus direct's. */
export function addedLatency(target: C1Latency, direct: C1Latency): AddedLatency {
  return { p50Us: target.p50Us - direct.p50Us, p99Us: target.p99Us - direct.p99Us };
}

/** Gateway time to first frame and inter-frame gaps minus direct's. */
export function addedFrames(target: FrameFigures, direct: FrameFigures): AddedFrames {
  return {
    ttffP50Ms: target.ttffMs.p50 - direct.ttffMs.p50,
    gapP50Ms: target.gapMs.p50 - direct.gapMs.p50,
    gapP99Ms: target.gapMs.p99 - direct.gapMs.p99,
  };
}
