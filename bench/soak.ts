// The soak: every measurable target at once, a fixed request rate plus a few streams each, for the
// configured time; RSS sampled every few seconds, growth taken after a warm-up fifth of the soak.
import type { Plan } from "./plan.ts";
import { rssBytes } from "./procs.ts";
import { STREAM_BODY } from "./requests.ts";
import { slope } from "./stats.ts";
import { timeStreams } from "./streams.ts";
import type { RunningTarget } from "./targets.ts";
import { connectionsFor, type WrkRequest, wrk } from "./wrk.ts";

export interface SoakFigures {
  seconds: number;
  rate: number;
  requests: number;
  errors: number;
  streams: number;
  /** RSS at the end minus RSS after the warm-up fifth. */
  growthBytes: number;
  /** Least-squares slope of RSS after the warm-up, in bytes per minute. */
  slopeBytesPerMinute: number;
  samples: { t: number; rssBytes: number }[];
}

async function streamLoop(target: RunningTarget, until: number, plan: Plan): Promise<number> {
  let streams = 0;
  const body = { url: target.url, headers: target.headers, body: STREAM_BODY };
  // Bounded: each round is one stream per slot (about 1.3 s), and the loop ends at `until`.
  while (Date.now() < until) {
    const timing = await timeStreams(body, plan.soakStreams, plan.soakStreams);
    streams += timing.streams;
  }
  return streams;
}

async function soakOne(target: RunningTarget, request: WrkRequest, plan: Plan): Promise<SoakFigures> {
  const started = Date.now();
  const until = started + plan.soakSeconds * 1000;
  const samples: { t: number; rssBytes: number }[] = [];
  const sample = () =>
    samples.push({ t: (Date.now() - started) / 1000, rssBytes: rssBytes(target.proc.pid) });
  sample();
  const sampler = setInterval(sample, 5000);
  const [load, streams] = await Promise.all([
    wrk(request, {
      connections: connectionsFor(plan.soakRate),
      seconds: plan.soakSeconds,
      rate: plan.soakRate,
    }),
    streamLoop(target, until, plan),
  ]);
  clearInterval(sampler);
  sample();
  const warm = samples.filter((s) => s.t >= plan.soakSeconds / 5);
  const first = warm[0]?.rssBytes ?? 0;
  const last = warm.at(-1)?.rssBytes ?? 0;
  return {
    seconds: plan.soakSeconds,
    rate: plan.soakRate,
    requests: load.requests,
    errors: load.errorCount,
    streams,
    growthBytes: last - first,
    slopeBytesPerMinute: slope(warm.map((s) => ({ x: s.t / 60, y: s.rssBytes }))),
    samples,
  };
}

/** Soaks all given targets in parallel; results by target name. */
export async function soak(
  targets: { target: RunningTarget; request: WrkRequest }[],
  plan: Plan,
): Promise<Map<string, SoakFigures>> {
  const results = await Promise.all(targets.map(({ target, request }) => soakOne(target, request, plan)));
  return new Map(results.map((r, i) => [targets[i]?.target.name ?? String(i), r]));
}
