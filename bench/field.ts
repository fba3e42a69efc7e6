// The field's method, per target, beside the bench's own figures: latency at concurrency 1 (added
// = target − direct), one concurrency sweep read at p99 bounds of 1 to 100 ms, sustained req/s
// behind a 20 ms upstream, time to first frame and inter-frame gaps at concurrency 1, the most
// concurrent streams without a stall, and memory idle, steady under load and recovered. Each
// section is its own module; this one runs those chosen, in a fixed order.
import type { C1Latency } from "./added.ts";
import { type FrameFigures, framesAtConcurrencyOne } from "./frames.ts";
import { latencyAtConcurrencyOne } from "./latency-c1.ts";
import { type MemoryFigures, memoryUnderLoad } from "./memory-phases.ts";
import { type Plan, SECTION_NAMES, type Section } from "./plan.ts";
import { STREAM_BODY } from "./requests.ts";
import { type StallFigures, streamsWithoutStall } from "./stalls.ts";
import { type SustainedFigures, sustainedThroughput } from "./sustained.ts";
import { concurrencySweep, frontierReadings, type Reading, type Rung } from "./sweep.ts";
import type { RunningTarget } from "./targets.ts";
import type { WrkRequest } from "./wrk.ts";

export interface FieldFigures {
  latency?: C1Latency;
  sweep?: { rungs: Rung[]; frontier: Reading[] };
  sustained?: SustainedFigures;
  frames?: FrameFigures;
  stalls?: StallFigures;
  memory?: MemoryFigures;
}

export const FIELD_SECTIONS: readonly Section[] = SECTION_NAMES.filter((s) => s !== "classic");

/** The target's requests: the plain Chat body, and the one the upstream answers after 20 ms. */
export interface FieldRequests {
  plain: WrkRequest;
  delayed: WrkRequest;
  /** The upstream's GET /stats. */
  upstreamStats: string;
}

/** The memory phase: a fixed load after the idle figure taken at start (run first, on a fresh target). */
export async function measureMemory(
  target: RunningTarget,
  request: WrkRequest,
  plan: Plan,
  idleBytes: number,
): Promise<MemoryFigures> {
  const f = plan.field;
  return memoryUnderLoad(target.proc.pid, request, idleBytes, {
    rate: f.memoryRate,
    seconds: f.memorySeconds,
    recoverSeconds: f.recoverSeconds,
  });
}

/** Every chosen field section but memory, in order; a failing section is reported and the rest run. */
export async function measureFieldSections(
  target: RunningTarget,
  requests: FieldRequests,
  plan: Plan,
  figures: FieldFigures,
  say: (line: string) => void,
): Promise<string[]> {
  const f = plan.field;
  const on = (s: Section) => plan.sections.includes(s);
  const stream = { url: target.url, headers: target.headers, body: STREAM_BODY };
  const sections: [Section, () => Promise<void>][] = [
    [
      "latency",
      async () => {
        figures.latency = await latencyAtConcurrencyOne(requests.plain, f.latencySeconds);
      },
    ],
    [
      "sweep",
      async () => {
        const rungs = await concurrencySweep(requests.plain, f.sweepLevels, f.sweepSeconds);
        figures.sweep = { rungs, frontier: frontierReadings(rungs) };
      },
    ],
    [
      "sustained",
      async () => {
        figures.sustained = await sustainedThroughput(
          requests.delayed,
          f.sustainedLevels,
          f.sustainedSeconds,
          requests.upstreamStats,
        );
      },
    ],
    [
      "frames",
      async () => {
        figures.frames = await framesAtConcurrencyOne(stream, f.frameStreams);
      },
    ],
    [
      "stalls",
      async () => {
        figures.stalls = await streamsWithoutStall(stream, f.stallSteps);
      },
    ],
  ];
  const problems: string[] = [];
  for (const [name, run] of sections) {
    if (!on(name)) continue;
    say(`${target.name}: ${name}`);
    try {
      await run();
    } catch (error) {
      problems.push(`${name}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return problems;
}
