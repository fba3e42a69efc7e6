// The most concurrent streams a target relays without a stall: at each step, that many streams of
// the upstream's 64 frames paced 20 ms are opened at once (raw sockets, so a stream costs the client
// a socket and a FrameClock) and read to their end. A step is clean when under 0.1 % of its streams
// fail (no 200, ended early, fewer than 64 frames, or not done in time) and no frame of any stream
// arrives more than 10× the pace after the one before it. Steps stop at the first unclean one.

import { STREAM_EVENTS } from "./answers.ts";
import { FrameClock } from "./frame-clock.ts";
import { percentile } from "./stats.ts";
import { rawRequest, type StreamTarget } from "./streams.ts";
import { STREAM_INTERVAL_MS } from "./upstream.ts";

/** A gap longer than this many paces between two frames of a stream is a stall. */
export const STALL_FACTOR = 10;
export const STALL_MS = STALL_FACTOR * STREAM_INTERVAL_MS;
export const STALL_MAX_FAILED_SHARE = 0.001;

export interface StallStep {
  streams: number;
  /** Streams with a 200, at least 64 frames and their last event. */
  completed: number;
  failed: number;
  /** Completed streams with a gap over STALL_MS. */
  stalled: number;
  maxGapMs: number;
  /** Seconds from the step's start to the frame the longest gap followed (streams stalled at one
   * moment point to a pause of the whole process rather than of one stream). */
  maxGapAtS: number;
  /** Completed streams whose longest gap began within 50 ms of that moment. */
  maxGapShared: number;
  /** p99 over streams of the time from sending the request to the first frame. */
  ttffP99Ms: number;
  /** Frames of the step ÷ the step's wall time. */
  framesPerSecond: number;
  seconds: number;
}

export interface StallFigures {
  /** The highest clean step; 0 when the first step was not clean. */
  held: number;
  steps: StallStep[];
}

/** Whether a step is clean: failures under the share and no stream stalled. */
export function stepClean(step: StallStep): boolean {
  return step.completed > 0 && step.failed <= STALL_MAX_FAILED_SHARE * step.streams && step.stalled === 0;
}

/** The highest step before the first unclean one (steps in the order run). */
export function mostStreamsWithoutStall(steps: readonly StallStep[]): number {
  let held = 0;
  for (const step of steps) {
    if (!stepClean(step)) break;
    held = Math.max(held, step.streams);
  }
  return held;
}

interface Tracked {
  started: number;
  status: "waiting" | "ok" | "refused";
  clock: FrameClock;
  done: boolean;
}

/** Opens `count` streams (in batches of 250 connects) and waits until each ended or `timeoutMs`. */
async function runStep(target: StreamTarget, count: number, timeoutMs: number): Promise<StallStep> {
  const url = new URL(target.url);
  const request = rawRequest(target);
  const tracked: Tracked[] = [];
  const sockets: { terminate(): void }[] = [];
  const began = performance.now();
  const openOne = async () => {
    const t: Tracked = {
      started: performance.now(),
      status: "waiting",
      clock: new FrameClock(target.end),
      done: false,
    };
    tracked.push(t);
    try {
      const socket = await Bun.connect({
        hostname: url.hostname,
        port: Number(url.port),
        socket: {
          data(s, data) {
            if (t.status === "waiting")
              t.status = data.toString("latin1", 0, 12).startsWith("HTTP/1.1 200") ? "ok" : "refused";
            if (t.status !== "ok") {
              t.done = true;
              s.terminate();
              return;
            }
            t.clock.feed(data.toString("latin1"), performance.now());
            if (t.clock.ended) {
              t.done = true;
              s.terminate();
            }
          },
          close() {
            t.done = true;
          },
          error() {
            t.done = true;
          },
        },
      });
      sockets.push(socket);
      socket.write(request);
    } catch {
      t.done = true;
    }
  };
  for (let opened = 0; opened < count; ) {
    const batch = Math.min(250, count - opened);
    await Promise.all(Array.from({ length: batch }, openOne));
    opened += batch;
  }
  const deadline = began + timeoutMs;
  while (tracked.some((t) => !t.done) && performance.now() < deadline) await Bun.sleep(20);
  const seconds = (performance.now() - began) / 1000;
  for (const socket of sockets) socket.terminate();
  const whole = tracked.filter((t) => t.status === "ok" && t.clock.ended && t.clock.frames >= STREAM_EVENTS);
  const stalled = whole.filter((t) => t.clock.maxGap() > STALL_MS).length;
  const longest = whole
    .map((t) => t.clock.longestGap())
    .reduce((a, b) => (b.ms > a.ms ? b : a), { ms: 0, after: began });
  const frames = tracked.reduce((sum, t) => sum + t.clock.frames, 0);
  return {
    streams: count,
    completed: whole.length,
    failed: count - whole.length,
    stalled,
    maxGapMs: longest.ms,
    maxGapAtS: (longest.after - began) / 1000,
    maxGapShared: whole.filter((t) => Math.abs(t.clock.longestGap().after - longest.after) <= 50).length,
    ttffP99Ms: percentile(
      whole.map((t) => (t.clock.stamps[0] ?? t.started) - t.started),
      99,
    ),
    framesPerSecond: seconds > 0 ? frames / seconds : 0,
    seconds,
  };
}

/** Runs the steps in order (each bounded by the stream's length plus 10 s) up to the first unclean one. */
export async function streamsWithoutStall(
  target: StreamTarget,
  steps: readonly number[],
): Promise<StallFigures> {
  const streamMs = STREAM_EVENTS * STREAM_INTERVAL_MS;
  const done: StallStep[] = [];
  for (const count of steps) {
    const step = await runStep(target, count, streamMs + 10_000);
    done.push(step);
    if (!stepClean(step)) break;
    // Let the target close the step's upstream connections before the next one opens.
    await Bun.sleep(500);
  }
  return { held: mostStreamsWithoutStall(done), steps: done };
}
