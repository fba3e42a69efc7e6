// A target's resident memory across its life: idle (the median of samples over a window after it
// started, before the first proxied request), steady under a fixed load (the median of the samples
// in the load's second half, and the slope there), and recovered (RSS at the end of a quiet window
// after the load stopped). RSS is the target's whole process tree (/proc/PID/status VmRSS).
import { rssBytes } from "./procs.ts";
import { percentile, slope } from "./stats.ts";
import { connectionsFor, type WrkRequest, wrk } from "./wrk.ts";

export interface MemorySample {
  /** Seconds since the load started. */
  t: number;
  rssBytes: number;
}

export interface MemoryFigures {
  idleBytes: number;
  /** The fixed load: req/s for `loadSeconds`. */
  rate: number;
  loadSeconds: number;
  steadyBytes: number;
  /** Least-squares slope of RSS over the load's second half, bytes per minute. */
  growthBytesPerMinute: number;
  recoverSeconds: number;
  recoveredBytes: number;
  samples: MemorySample[];
}

/** The median RSS of samples every 100 ms over `windowMs`. */
export async function idleRss(pid: number, windowMs: number): Promise<number> {
  const samples = [rssBytes(pid)];
  const deadline = performance.now() + windowMs;
  while (performance.now() < deadline) {
    await Bun.sleep(100);
    samples.push(rssBytes(pid));
  }
  return percentile(samples, 50);
}

/** The level and slope of the samples in the second half of the load. */
export function steadyLevel(
  samples: readonly MemorySample[],
  loadSeconds: number,
): { steadyBytes: number; growthBytesPerMinute: number } {
  const late = samples.filter((s) => s.t >= loadSeconds / 2 && s.t <= loadSeconds);
  return {
    steadyBytes: percentile(
      late.map((s) => s.rssBytes),
      50,
    ),
    growthBytesPerMinute: slope(late.map((s) => ({ x: s.t / 60, y: s.rssBytes }))),
  };
}

/** Fixed-rate load with RSS sampled every 250 ms, then a quiet `recoverSeconds`. */
export async function memoryUnderLoad(
  pid: number,
  request: WrkRequest,
  idleBytes: number,
  load: { rate: number; seconds: number; recoverSeconds: number },
): Promise<MemoryFigures> {
  const started = performance.now();
  const samples: MemorySample[] = [];
  const sample = () => samples.push({ t: (performance.now() - started) / 1000, rssBytes: rssBytes(pid) });
  const sampler = setInterval(sample, 250);
  try {
    await wrk(request, { connections: connectionsFor(load.rate), seconds: load.seconds, rate: load.rate });
  } finally {
    clearInterval(sampler);
  }
  await Bun.sleep(load.recoverSeconds * 1000);
  const recoveredBytes = rssBytes(pid);
  return {
    idleBytes,
    rate: load.rate,
    loadSeconds: load.seconds,
    ...steadyLevel(samples, load.seconds),
    recoverSeconds: load.recoverSeconds,
    recoveredBytes,
    samples,
  };
}
