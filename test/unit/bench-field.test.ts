// The pure parts of the bench's field sections: reading the throughput frontier and the sustained
// figure off one concurrency sweep, the frame clock (frames split across chunks, `[DONE]` not a
// frame), inter-frame statistics, the added-latency arithmetic, the stall verdict, and the steady
// memory level; the flags that choose sections and sizes.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { addedFrames, addedLatency } from "../../bench/added.ts";
import { FrameClock } from "../../bench/frame-clock.ts";
import { frameStats } from "../../bench/frames.ts";
import { steadyLevel } from "../../bench/memory-phases.ts";
import { parseOptions, SECTION_NAMES } from "../../bench/plan.ts";
import { mostStreamsWithoutStall, STALL_MS, type StallStep, stepClean } from "../../bench/stalls.ts";
import { sustainedReading } from "../../bench/sustained.ts";
import { FRONTIER_BOUNDS_US, frontierAt, frontierReadings, type Rung } from "../../bench/sweep.ts";

const rung = (concurrency: number, rps: number, p99Ms: number, errors = 0, requests = 10_000): Rung => ({
  concurrency,
  requests,
  rps,
  p50Us: (p99Ms * 1000) / 2,
  p99Us: p99Ms * 1000,
  errors,
});

describe("frontier read off one sweep", () => {
  test("each bound takes the most req/s among rungs with p99 under it and no errors", () => {
    const rungs = [
      rung(1, 900, 0.4),
      rung(4, 3000, 2),
      rung(16, 5200, 8),
      rung(64, 5600, 40),
      rung(256, 5500, 160),
    ];
    const readings = frontierReadings(rungs);
    expect(readings.map((r) => r.boundUs)).toEqual([...FRONTIER_BOUNDS_US]);
    expect(readings.map((r) => r.rps)).toEqual([900, 3000, 5200, 5600, 5600]);
    expect(readings.map((r) => r.concurrency)).toEqual([1, 4, 16, 64, 64]);
    // The reading carries the rung's own p99, not the bound.
    expect(readings[4]?.p99Us).toBe(40_000);
    expect(readings.every((r) => !r.atTop)).toBe(true);
  });

  test("no qualifying rung reads 0; a rung with errors or no requests never qualifies", () => {
    expect(frontierAt([rung(1, 500, 3)], 1000)).toEqual({ boundUs: 1000, rps: 0, atTop: false });
    expect(frontierAt([rung(8, 4000, 0.5, 1)], 1000).rps).toBe(0);
    expect(frontierAt([rung(8, 0, 0.5, 0, 0)], 1000).rps).toBe(0);
  });

  test("a tie on req/s names the lowest concurrency; the sweep's last rung is marked", () => {
    const r = frontierAt([rung(64, 2000, 3), rung(16, 2000, 2), rung(256, 1900, 4)], 5000);
    expect(r.concurrency).toBe(16);
    expect(frontierAt([rung(1, 100, 1), rung(2, 200, 1)], 5000).atTop).toBe(true);
  });

  test("relaxing the bound never lowers the reading (any sweep)", () => {
    const arbRung = fc.record({
      concurrency: fc.integer({ min: 1, max: 1024 }),
      requests: fc.integer({ min: 0, max: 100_000 }),
      rps: fc.double({ min: 0, max: 50_000, noNaN: true }),
      p50Us: fc.integer({ min: 0, max: 500_000 }),
      p99Us: fc.integer({ min: 0, max: 500_000 }),
      errors: fc.integer({ min: 0, max: 5 }),
    });
    fc.assert(
      fc.property(fc.array(arbRung, { maxLength: 12 }), (rungs) => {
        const rps = frontierReadings(rungs).map((r) => r.rps);
        for (let i = 1; i < rps.length; i++) expect(rps[i] ?? 0).toBeGreaterThanOrEqual(rps[i - 1] ?? 0);
      }),
      { seed: 31, numRuns: 300 },
    );
  });

  test("sustained: p99 under 1 s and under 0.1 % errors", () => {
    const rungs = [
      rung(8, 390, 22),
      rung(128, 6000, 40, 5, 18_000), // 0.028 % errors: counts
      rung(512, 9000, 300, 20, 27_000), // 0.074 %: counts
      rung(1024, 9500, 900, 40, 28_500), // 0.14 %: too many errors
      rung(2048, 9800, 1200), // p99 over 1 s
    ];
    const r = sustainedReading(rungs);
    expect(r.rps).toBe(9000);
    expect(r.concurrency).toBe(512);
  });
});

describe("frame clock", () => {
  const frame = (i: number) => `data: {"i":${i}}\n\n`;

  test("counts data lines as frames, not [DONE], and sees the end", () => {
    const clock = new FrameClock();
    clock.feed(frame(0), 10);
    clock.feed(frame(1) + frame(2), 30);
    expect(clock.ended).toBe(false);
    clock.feed(`${frame(3)}data: [DONE]\n\n`, 50);
    expect(clock.stamps).toEqual([10, 30, 30, 50]);
    expect(clock.gaps()).toEqual([20, 0, 20]);
    expect(clock.maxGap()).toBe(20);
    expect(clock.longestGap()).toEqual({ ms: 20, after: 10 });
    expect(clock.ended).toBe(true);
  });

  test("a frame or [DONE] cut across chunks is counted once, at the chunk that completes it", () => {
    const clock = new FrameClock();
    clock.feed("da", 1);
    clock.feed('ta: {"i":0}\n\nd', 2);
    clock.feed('ata: {"i":1}\n\ndata:', 3);
    clock.feed(" [DO", 4);
    clock.feed("NE]\n\n", 5);
    expect(clock.stamps).toEqual([2, 3]);
    expect(clock.ended).toBe(true);
  });

  test("any split of a stream gives the same frame count and end", () => {
    const text = `event: a\n${frame(0)}${frame(1)}${frame(2)}data: [DONE]\n\n`;
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 1, max: text.length - 1 }), { maxLength: 8 }), (cuts) => {
        const points = [0, ...cuts.sort((a, b) => a - b), text.length];
        const clock = new FrameClock();
        for (let i = 1; i < points.length; i++) clock.feed(text.slice(points[i - 1], points[i]), i);
        expect(clock.frames).toBe(3);
        expect(clock.ended).toBe(true);
      }),
      { seed: 31, numRuns: 300 },
    );
  });

  test("another protocol's last event ends the stream", () => {
    const clock = new FrameClock("message_stop");
    clock.feed('event: message_stop\ndata: {"type":"message_stop"}\n\n', 7);
    expect(clock.frames).toBe(1);
    expect(clock.ended).toBe(true);
  });
});

describe("inter-frame statistics and added figures", () => {
  test("time to first frame per stream, gaps pooled over streams", () => {
    const gaps = Array.from({ length: 99 }, () => 20);
    const stats = frameStats(
      [
        { ttffMs: 1, gapsMs: gaps, frames: 100 },
        { ttffMs: 3, gapsMs: [...gaps.slice(1), 25], frames: 100 },
      ],
      1,
    );
    expect(stats.streams).toBe(2);
    expect(stats.failed).toBe(1);
    expect(stats.framesPerStream).toBe(100);
    expect(stats.ttffMs).toEqual({ p50: 1, p99: 3 });
    expect(stats.gapMs).toEqual({ p50: 20, p99: 20, max: 25 });
    expect(frameStats([], 0).gapMs).toEqual({ p50: 0, p99: 0, max: 0 });
  });

  test("added = target percentile − direct percentile", () => {
    const direct = { requests: 9000, errors: 0, p50Us: 110, p99Us: 240 };
    expect(addedLatency({ requests: 5000, errors: 0, p50Us: 410, p99Us: 1340 }, direct)).toEqual({
      p50Us: 300,
      p99Us: 1100,
    });
    const base = { streams: 8, failed: 0, framesPerStream: 64, ttffMs: { p50: 1, p99: 2 } };
    const added = addedFrames(
      { ...base, ttffMs: { p50: 3.5, p99: 5 }, gapMs: { p50: 20.25, p99: 21.5, max: 30 } },
      { ...base, gapMs: { p50: 20.125, p99: 21, max: 22 } },
    );
    expect(added).toEqual({ ttffP50Ms: 2.5, gapP50Ms: 0.125, gapP99Ms: 0.5 });
  });
});

describe("stalls and memory", () => {
  const step = (streams: number, over: Partial<StallStep> = {}): StallStep => ({
    streams,
    completed: streams,
    failed: 0,
    stalled: 0,
    maxGapMs: 25,
    maxGapAtS: 0.5,
    maxGapShared: 1,
    ttffP99Ms: 3,
    framesPerSecond: 1000,
    seconds: 1.4,
    ...over,
  });

  test("a step is clean with under 0.1 % failed and no gap past 10× the pace", () => {
    expect(STALL_MS).toBe(200);
    expect(stepClean(step(1000, { completed: 999, failed: 1 }))).toBe(true);
    expect(stepClean(step(1000, { completed: 998, failed: 2 }))).toBe(false);
    expect(stepClean(step(100, { completed: 99, failed: 1 }))).toBe(false);
    expect(stepClean(step(100, { stalled: 1 }))).toBe(false);
    expect(stepClean(step(100, { completed: 0, failed: 0 }))).toBe(false);
  });

  test("the most streams is the last clean step before the first unclean one", () => {
    expect(mostStreamsWithoutStall([step(100), step(250), step(500, { stalled: 3 }), step(1000)])).toBe(250);
    expect(mostStreamsWithoutStall([step(100, { stalled: 1 })])).toBe(0);
    expect(mostStreamsWithoutStall([])).toBe(0);
  });

  test("steady RSS is the median of the load's second half, with its slope", () => {
    const samples = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((t) => ({
      t,
      rssBytes: t < 5 ? 50 : 100 + (t - 5),
    }));
    const level = steadyLevel(samples, 10);
    expect(level.steadyBytes).toBe(102);
    expect(level.growthBytesPerMinute).toBeCloseTo(60, 6);
    // Samples after the load (the recovery window) do not count.
    expect(steadyLevel([...samples, { t: 12, rssBytes: 10 }], 10).steadyBytes).toBe(102);
  });
});

describe("choosing sections and sizes", () => {
  test("--sections picks sections, --small shrinks them, the rung lists are read, bad names are refused", () => {
    const all = parseOptions([], 20_000).plan;
    expect(all.sections).toEqual([...SECTION_NAMES]);
    expect(all.field.stallSteps).toEqual([100, 250, 500, 1000, 2000, 4000]);
    const small = parseOptions(["--small", "--sections", "sweep,stalls", "--sweep", "1,8"], 20_000).plan;
    expect(small.sections).toEqual(["sweep", "stalls"]);
    expect(small.field.sweepLevels).toEqual([1, 8]);
    expect(small.field.stallSteps).toEqual([10, 50]);
    expect(small.soakSeconds).toBe(10);
    // Steps a proxy cannot hold within the open-file limit (two sockets a stream) are dropped.
    expect(parseOptions([], 2400).plan.field.stallSteps).toEqual([100, 250, 500, 1000]);
    expect(() => parseOptions(["--sections", "sweep,nope"], 20_000)).toThrow(
      /--sections: unknown section "nope"/,
    );
    expect(() => parseOptions(["--sweep", "1,x"], 20_000)).toThrow(/--sweep: expected a whole number/);
  });
});
