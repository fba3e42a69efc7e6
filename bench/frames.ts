// Frame timing at concurrency 1: streams of the upstream's 64 frames paced 20 ms, one after
// another, each frame stamped on arrival. Time to first frame is from sending the request to the
// first `data:` frame; inter-frame gaps are between consecutive frames of a stream. Both carry the
// upstream's pace and the timer's jitter, so a target's figure minus direct's is what it adds.
import { FrameClock } from "./frame-clock.ts";
import { percentile } from "./stats.ts";
import type { StreamTarget } from "./streams.ts";

export interface FrameSample {
  ttffMs: number;
  gapsMs: number[];
  frames: number;
}

export interface FrameFigures {
  streams: number;
  failed: number;
  framesPerStream: number;
  ttffMs: { p50: number; p99: number };
  gapMs: { p50: number; p99: number; max: number };
}

/** One stream through `target`: time to its first frame and the gaps between its frames. */
async function timeFrames(target: StreamTarget, timeoutMs: number): Promise<FrameSample> {
  const started = performance.now();
  const response = await fetch(target.url, {
    method: "POST",
    headers: { ...target.headers, "content-type": "application/json" },
    body: target.body,
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (response.status !== 200 || !response.body) throw new Error(`status ${response.status}`);
  const clock = new FrameClock(target.end);
  const decoder = new TextDecoder();
  for await (const chunk of response.body)
    clock.feed(decoder.decode(chunk, { stream: true }), performance.now());
  const first = clock.stamps[0];
  if (first === undefined || !clock.ended) throw new Error("the stream ended before its last event");
  return { ttffMs: first - started, gapsMs: clock.gaps(), frames: clock.frames };
}

/** Percentiles over streams: time to first frame per stream, and every gap of every stream. */
export function frameStats(samples: readonly FrameSample[], failed: number): FrameFigures {
  const ttffs = samples.map((s) => s.ttffMs);
  const gaps = samples.flatMap((s) => s.gapsMs);
  const frames = samples.reduce((sum, s) => sum + s.frames, 0);
  return {
    streams: samples.length,
    failed,
    framesPerStream: samples.length > 0 ? frames / samples.length : 0,
    ttffMs: { p50: percentile(ttffs, 50), p99: percentile(ttffs, 99) },
    gapMs: { p50: percentile(gaps, 50), p99: percentile(gaps, 99), max: Math.max(0, ...gaps) },
  };
}

/** `count` streams one at a time (a failed one counted, never retried). */
export async function framesAtConcurrencyOne(target: StreamTarget, count: number): Promise<FrameFigures> {
  const samples: FrameSample[] = [];
  let failed = 0;
  for (let i = 0; i < count; i++) {
    try {
      samples.push(await timeFrames(target, 15_000));
    } catch {
      failed++;
    }
  }
  return frameStats(samples, failed);
}
