// The several-processes comparison: modelgate with 1 and with 2 worker processes on one port
// (modelgate-1p, modelgate-2p), each allowed both cores. Figures: latency at concurrency 1, the
// closed loop with CPU time per request of the whole process tree and the primary's share of it,
// and the fixed-rate frontier. Streams, held streams and the soak are the single-core target's.
import { readFileSync } from "node:fs";
import { frontier } from "./measure.ts";
import type { Plan } from "./plan.ts";
import { cpuSeconds, processTree } from "./procs.ts";
import type { RunningTarget } from "./targets.ts";
import { type WrkRequest, wrk } from "./wrk.ts";

export interface ScalingFigures {
  /** Processes in the target's tree while measured (primary and workers). */
  processes: number;
  latency: { p50Us: number; p99Us: number; rps: number };
  closed: {
    connections: number;
    rps: number;
    p99Us: number;
    errors: number;
    /** User + system CPU of every process of the target, per request. */
    cpuUsPerRequest: number;
    /** The primary's part of it (admission, settlement, usage writes, IPC); null for one process. */
    primaryCpuUsPerRequest: number | null;
    /** Share of all the machine's cores busy (every process: target, load generator, upstream). */
    machineBusy: number;
  };
  frontier: { rate: number; steps: { rate: number; achieved: number; p99Us: number; ok: boolean }[] };
}

/** Busy and total jiffies of all cores together, from the first line of /proc/stat. */
function machineJiffies(): { busy: number; total: number } {
  const fields = (readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "")
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  const total = fields.reduce((sum, n) => sum + n, 0);
  const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
  return { busy: total - idle, total };
}

/** CPU seconds of the root process alone and of its whole tree. */
function cpuSplit(root: number): { root: number; tree: number } {
  const tree = cpuSeconds(root);
  const children = processTree(root).slice(1);
  const below = children.reduce((sum, pid) => sum + cpuSeconds(pid), 0);
  return { root: tree - below, tree };
}

export async function measureScaling(
  target: RunningTarget,
  request: WrkRequest,
  plan: Plan,
  workers: number,
): Promise<ScalingFigures> {
  const pid = target.proc.pid;
  await wrk(request, { connections: 8, seconds: plan.warmupSeconds, rate: 0 });
  const c1 = await wrk(request, { connections: 1, seconds: plan.latencySeconds, rate: 0 });
  const processes = processTree(pid).length;
  const before = cpuSplit(pid);
  const machineBefore = machineJiffies();
  const closed = await wrk(request, {
    connections: plan.closedConnections,
    seconds: plan.closedSeconds,
    rate: 0,
  });
  const machineAfter = machineJiffies();
  const after = cpuSplit(pid);
  if (closed.requests === 0 || closed.errorCount > closed.requests / 100) {
    throw new Error(`closed loop: ${closed.requests} requests, ${JSON.stringify(closed.errors)} errors`);
  }
  const perRequest = (seconds: number) => (seconds * 1e6) / closed.requests;
  const front = await frontier(request, closed.rps, plan);
  return {
    processes,
    latency: { p50Us: c1.latency_us.p50, p99Us: c1.latency_us.p99, rps: c1.rps },
    closed: {
      connections: plan.closedConnections,
      rps: closed.rps,
      p99Us: closed.latency_us.p99,
      errors: closed.errorCount,
      cpuUsPerRequest: perRequest(after.tree - before.tree),
      primaryCpuUsPerRequest: workers > 1 ? perRequest(after.root - before.root) : null,
      machineBusy: (machineAfter.busy - machineBefore.busy) / (machineAfter.total - machineBefore.total),
    },
    frontier: front,
  };
}
