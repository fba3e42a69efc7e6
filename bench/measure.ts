// The figures for one target, in a fixed order: idle RSS, latency at concurrency 1, closed-loop
// throughput with CPU time per request and RSS under load, the fixed-rate frontier, streaming
// timing, and concurrent streams held.
import type { Plan } from "./plan.ts";
import { cpuSeconds, rssBytes } from "./procs.ts";
import { holdBody, STREAM_BODY } from "./requests.ts";
import { type HeldStreams, holdStreams, type StreamTiming, timeStreams } from "./streams.ts";
import type { RunningTarget } from "./targets.ts";
import { connectionsFor, type WrkRequest, type WrkResult, wrk } from "./wrk.ts";

/** p99 must stay under this for a rate to count in the throughput frontier. */
export const FRONTIER_P99_US = 5000;

export interface FrontierStep {
  rate: number;
  achieved: number;
  p99Us: number;
  errors: number;
  ok: boolean;
}

export interface TargetFigures {
  idleRssBytes: number;
  latency: { p50Us: number; p99Us: number; rps: number };
  closed: { connections: number; rps: number; p99Us: number; errors: number; cpuUsPerRequest: number };
  loadRssBytes: number;
  frontier: { rate: number; steps: FrontierStep[] };
  stream: StreamTiming;
  held: HeldStreams;
  /** Upstream streams still open a while after the clients of the held streams left. */
  upstreamStreamsLeftOpen: number;
}

function failIfErrors(what: string, result: WrkResult): void {
  if (result.requests === 0 || result.errorCount > result.requests / 100) {
    throw new Error(`${what}: ${result.requests} requests, ${JSON.stringify(result.errors)} errors`);
  }
}

/** Closed loop at `connections`, with the proxy's CPU time and peak RSS over the run. */
async function closedLoop(target: RunningTarget, request: WrkRequest, plan: Plan) {
  const pid = target.proc.pid;
  let peakRss = rssBytes(pid);
  const cpuBefore = cpuSeconds(pid);
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, rssBytes(pid));
  }, 500);
  const result = await wrk(request, {
    connections: plan.closedConnections,
    seconds: plan.closedSeconds,
    rate: 0,
  });
  clearInterval(sampler);
  const cpu = cpuSeconds(pid) - cpuBefore;
  failIfErrors("closed loop", result);
  return {
    closed: {
      connections: plan.closedConnections,
      rps: result.rps,
      p99Us: result.latency_us.p99,
      errors: result.errorCount,
      cpuUsPerRequest: (cpu * 1e6) / result.requests,
    },
    loadRssBytes: peakRss,
  };
}

/** Binary search for the highest fixed rate with p99 under 5 ms, no errors, and the rate achieved. */
export async function frontier(request: WrkRequest, ceiling: number, plan: Plan) {
  const steps: FrontierStep[] = [];
  let lo = 0;
  let hi = Math.max(100, ceiling * 1.1);
  for (let i = 0; i < plan.frontierSteps; i++) {
    const rate = Math.round((lo + hi) / 2);
    const result = await wrk(request, {
      connections: connectionsFor(rate),
      seconds: plan.frontierSeconds,
      rate,
    });
    const ok =
      result.latency_us.p99 < FRONTIER_P99_US && result.errorCount === 0 && result.rps >= rate * 0.95;
    steps.push({ rate, achieved: result.rps, p99Us: result.latency_us.p99, errors: result.errorCount, ok });
    if (ok) lo = rate;
    else hi = rate;
  }
  return { rate: lo, steps };
}

/** Waits (bounded) until the upstream has no more streams open than before; returns how many remain. */
async function upstreamDrain(upstreamUrl: string, baseline: number, waitMs: number): Promise<number> {
  const deadline = Date.now() + waitMs;
  let open = 0;
  do {
    await Bun.sleep(250);
    const stats = (await (await fetch(upstreamUrl)).json()) as { active_streams?: unknown };
    open = typeof stats.active_streams === "number" ? stats.active_streams - baseline : 0;
  } while (open > 0 && Date.now() < deadline);
  return Math.max(0, open);
}

export async function measureTarget(
  target: RunningTarget,
  request: WrkRequest,
  plan: Plan,
  upstreamStatsUrl: string,
  say: (line: string) => void,
): Promise<TargetFigures> {
  await Bun.sleep(500);
  const idleRssBytes = rssBytes(target.proc.pid);
  await wrk(request, { connections: 8, seconds: plan.warmupSeconds, rate: 0 });

  say(`${target.name}: concurrency 1, closed loop, frontier`);
  const c1 = await wrk(request, { connections: 1, seconds: plan.latencySeconds, rate: 0 });
  failIfErrors("concurrency 1", c1);
  const latency = { p50Us: c1.latency_us.p50, p99Us: c1.latency_us.p99, rps: c1.rps };
  const { closed, loadRssBytes } = await closedLoop(target, request, plan);
  const front = await frontier(request, closed.rps, plan);

  say(`${target.name}: streams`);
  const streamTarget = { url: target.url, headers: target.headers, body: STREAM_BODY };
  const stream = await timeStreams(streamTarget, plan.streamCount, plan.streamParallel);
  const baseline = await upstreamDrain(upstreamStatsUrl, 0, 3000);
  const holdTarget = { ...streamTarget, body: holdBody(plan.holdMs) };
  say(`${target.name}: holding up to ${plan.holdSteps.at(-1)} streams`);
  const held = await holdStreams(holdTarget, plan.holdSteps, () => rssBytes(target.proc.pid));
  const upstreamStreamsLeftOpen = await upstreamDrain(upstreamStatsUrl, baseline, plan.drainMs);
  // A target that does not cancel upstream streams leaves them until the upstream ends them:
  // wait for that (bounded) so the next target starts from a clean upstream.
  if (upstreamStreamsLeftOpen > 0) await upstreamDrain(upstreamStatsUrl, baseline, plan.holdMs + 5000);
  return {
    idleRssBytes,
    latency,
    closed,
    loadRssBytes,
    frontier: front,
    stream,
    held,
    upstreamStreamsLeftOpen,
  };
}
