// Where the slowest requests at concurrency 1 spend their time: each --bin is started with its
// stage timeline on (`server.stage_trace`, src/telemetry/timeline.ts), warmed up, then driven by
// one wrk connection in a closed loop; at the stop it writes the timeline, which is read here.
// At concurrency 1 a request's cycle (its `received` to the next one's) is the client's latency
// plus wrk's turnaround, so the slowest cycles are the slowest requests. Each slow cycle's time
// over the median cycle is split by stage (the segment between two stamps) and given a cause from
// what else the timeline holds inside the cycle: a collection, the main thread waiting for the
// CPU, a store-thread message or journal truncation, a timer's callback, a slow journal write, an
// event-loop stall; else the segment the excess fell in.
//
// The client is bench/c1-loop.ts (every request timed; wrk's figures at one connection do not add
// up here). --no-trace runs the same loop on builds without the timeline, interleaved round by
// round, for before/after figures: p50, p99 and p99.9 per round, with the load average.
//
//   bun bench/tail.ts --bin PATH [--bin ...] [--seconds 10] [--warmup-seconds 5] [--slow-percent 1]
//                     [--rounds 1] [--keep DIR] [--no-trace]
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { EVENTS, STAGES, type Stamp } from "../src/telemetry/timeline.ts";
import { closedLoopC1, coCorrected } from "./c1-loop.ts";
import { wholeOption } from "./options.ts";
import { LOAD_CORE, loadAverage, pinSelf } from "./procs.ts";
import { writeBodyFile } from "./requests.ts";
import { percentile } from "./stats.ts";
import {
  type BenchContext,
  CHAT_PATH,
  modelgateContext,
  startBenchUpstream,
  startModelgateServer,
} from "./targets.ts";
import { wrk } from "./wrk.ts";

/** Segments of a cycle: from each stage to the next, and from `finished` to the next `received`. */
export const SEGMENTS = [
  ...STAGES.slice(1).map((stage, i) => `${STAGES[i]}→${stage}`),
  "finished→next received",
] as const;

export interface Cycle {
  request: number;
  start: number;
  end: number;
  /** Segment lengths, ms, in SEGMENTS order. */
  segments: number[];
  /** Main thread's run-queue wait during the cycle, ms. */
  waitMs: number;
}

/** The complete cycles of a timeline: requests with every stage, followed by another request. */
export function cyclesOf(stamps: readonly Stamp[]): Cycle[] {
  const byRequest = new Map<number, Map<string, Stamp>>();
  for (const s of stamps) {
    if (s.request < 0) continue;
    const stages = byRequest.get(s.request) ?? new Map<string, Stamp>();
    byRequest.set(s.request, stages);
    stages.set(s.kind, s);
  }
  const cycles: Cycle[] = [];
  for (const [request, stages] of byRequest) {
    const next = byRequest.get(request + 1)?.get("received");
    const own = STAGES.map((k) => stages.get(k));
    if (next === undefined || own.some((s) => s === undefined)) continue;
    const times = [...(own as Stamp[]).map((s) => s.t), next.t];
    const first = own[0] as Stamp;
    cycles.push({
      request,
      start: first.t,
      end: next.t,
      segments: times.slice(1).map((t, i) => t - (times[i] ?? t)),
      waitMs: next.value - first.value,
    });
  }
  return cycles.sort((a, b) => a.start - b.start);
}

export interface Attributed {
  cycle: Cycle;
  excessMs: number;
  cause: string;
  /** The segment holding most of the excess. */
  segment: string;
}

/** The timeline's events that run on the event loop (the upstream's fetch stamps are stages' detail). */
const EVENT_KINDS = new Set<string>(
  EVENTS.filter((kind) => kind !== "fetch_sent" && kind !== "fetch_headers"),
);

/** A callback that ran this long is a cause. */
const CALLBACK_MS = 0.1;

/** The slowest `percent` % of cycles, each with its excess over the median cycle and its cause. */
export function attribute(stamps: readonly Stamp[], cycles: readonly Cycle[], percent: number): Attributed[] {
  const lengths = cycles.map((c) => c.end - c.start);
  const median = percentile(lengths, 50);
  const medians = SEGMENTS.map((_, i) =>
    percentile(
      cycles.map((c) => c.segments[i] ?? 0),
      50,
    ),
  );
  const slow = [...cycles]
    .sort((a, b) => b.end - b.start - (a.end - a.start))
    .slice(0, Math.max(1, Math.round((cycles.length * percent) / 100)));
  const events = stamps.filter((s) => EVENT_KINDS.has(s.kind)).sort((a, b) => a.t - b.t);
  return slow.map((cycle) => {
    const inside = eventsBetween(events, cycle.start, cycle.end);
    const excessMs = cycle.end - cycle.start - median;
    const over = cycle.segments.map((ms, i) => ms - (medians[i] ?? 0));
    const worst = over.indexOf(Math.max(...over));
    return { cycle, excessMs, cause: causeOf(inside, cycle, excessMs), segment: SEGMENTS[worst] ?? "" };
  });
}

function eventsBetween(events: readonly Stamp[], from: number, to: number): Stamp[] {
  // A gc stamp is its sentinel's finalizer, run just after the collection: one stamped soon after
  // the cycle's end (within a millisecond) may be this cycle's.
  return events.filter((e) => (e.t >= from && e.t < to) || (e.kind === "gc" && e.t >= to && e.t < to + 1));
}

function causeOf(inside: readonly Stamp[], cycle: Cycle, excessMs: number): string {
  if (inside.some((e) => e.kind === "gc")) return "collection (JSC eden/full GC)";
  if (cycle.waitMs > 0.5 * excessMs)
    return "main thread waited for the CPU (another thread or process on its core)";
  if (inside.some((e) => e.kind === "store_reply" || e.kind === "store_post"))
    return "store thread message (post or answer handled on the event loop)";
  if (inside.some((e) => e.kind === "journal_clear"))
    return "journal emptied or compacted after a store commit";
  const callback = inside
    .filter(
      (e) =>
        (e.kind === "timer" || e.kind === "interval" || e.kind === "immediate") && e.value >= CALLBACK_MS,
    )
    .sort((a, b) => b.value - a.value)[0];
  if (callback !== undefined) return `${callback.kind} callback: ${callback.label.slice(0, 60)}`;
  if (inside.some((e) => e.kind === "journal_append" && e.value >= CALLBACK_MS))
    return "journal write (slow write(2))";
  if (inside.some((e) => e.kind === "stall")) return "event-loop stall, nothing stamped";
  return "nothing on the gateway's event loop (the upstream or the client, on the other core)";
}

/** The causes as table rows: share of slow cycles and the median excess, largest share first. */
export function causeTable(
  slow: readonly Attributed[],
): { cause: string; share: number; excessMs: number; segments: string }[] {
  const groups = new Map<string, Attributed[]>();
  for (const a of slow) groups.set(a.cause, [...(groups.get(a.cause) ?? []), a]);
  return [...groups.entries()]
    .map(([cause, rows]) => {
      const segs = new Map<string, number>();
      for (const r of rows) segs.set(r.segment, (segs.get(r.segment) ?? 0) + 1);
      return {
        cause,
        share: rows.length / slow.length,
        excessMs: percentile(
          rows.map((r) => r.excessMs),
          50,
        ),
        segments: [...segs.entries()]
          .sort((a, b) => b[1] - a[1])
          .slice(0, 3)
          .map(([s, n]) => `${s} ${n}`)
          .join(", "),
      };
    })
    .sort((a, b) => b.share - a.share);
}

if (import.meta.main) await main();

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      bin: { type: "string", multiple: true },
      seconds: { type: "string" },
      "warmup-seconds": { type: "string" },
      "slow-percent": { type: "string" },
      rounds: { type: "string" },
      keep: { type: "string" },
      "no-trace": { type: "boolean" },
    },
    strict: true,
  });
  const seconds = wholeOption("seconds", values.seconds, 10);
  const warmup = wholeOption("warmup-seconds", values["warmup-seconds"], 5);
  const percent = Number(values["slow-percent"] ?? 1);
  const rounds = wholeOption("rounds", values.rounds, 1);
  // Absolute: each server runs in a folder of its own.
  const bins = (values.bin ?? []).map((bin) => resolve(bin));
  if (bins.length === 0) throw new Error("--bin: give at least one modelgate executable (npm run build)");
  pinSelf(LOAD_CORE);
  const dir = mkdtempSync(join(tmpdir(), "modelgate-tail-"));
  const upstream = await startBenchUpstream(dir);
  try {
    const ctx = modelgateContext(dir, upstream);
    const bodyFile = writeBodyFile(dir);
    const body = readFileSync(bodyFile, "utf8");
    const untraced = new Map<string, { p50: number; p99: number; p999: number; wrkP99: number }[]>(
      bins.map((b) => [b, []]),
    );
    for (let round = 1; round <= rounds; round++) {
      // Alternating order each round, so neither build always runs first.
      const order = round % 2 === 1 ? [...bins.entries()] : [...bins.entries()].reverse();
      for (const [i, bin] of order) {
        if (values["no-trace"]) {
          const figures = await untracedRound(ctx, bin, `ab-${round}-${i}`, bodyFile, body, warmup, seconds);
          untraced.get(bin)?.push(figures);
          console.log(
            `round ${round} ${bin}: p50 ${figures.p50.toFixed(3)} ms, p99 ${figures.p99.toFixed(3)} ms, p99.9 ${figures.p999.toFixed(3)} ms, p99 as wrk counts it ${figures.wrkP99.toFixed(3)} ms, load ${figures.load}`,
          );
          continue;
        }
        const label = `tail-${round}-${i}`;
        const traceFile = join(dir, `${label}.trace`);
        const server = await startModelgateServer(
          { ...ctx, modelgateBin: bin },
          { label, workers: 1, core: 1, env: { MODELGATE_STAGE_TRACE: traceFile } },
        );
        const request = { url: server.base + CHAT_PATH, headers: server.headers, bodyFile };
        const loadBefore = loadAverage();
        let latencies: number[];
        try {
          await wrk(request, { connections: 4, seconds: warmup, rate: 0 });
          await wrk(request, { connections: 1, seconds: 1, rate: 0 });
          latencies = await closedLoopC1(request.url, request.headers, body, seconds);
        } finally {
          // The stop writes the timeline (up to a few seconds for a large one); a failed run's
          // server is stopped too.
          server.proc.sub.kill("SIGTERM");
          await Promise.race([server.proc.sub.exited, Bun.sleep(60_000)]);
          if (server.proc.sub.exitCode === null) server.proc.sub.kill("SIGKILL");
        }
        const stamps = readFileSync(traceFile, "utf8")
          .split("\n")
          .filter((l) => l !== "")
          .map((l) => JSON.parse(l) as Stamp);
        report(bin, round, stamps, latencies, percent, `${loadBefore} → ${loadAverage()}`);
        if (values.keep !== undefined) {
          mkdirSync(values.keep, { recursive: true });
          await Bun.write(join(values.keep, `${label}.trace`), Bun.file(traceFile));
        }
        rmSync(traceFile, { force: true });
      }
    }
    if (values["no-trace"]) {
      console.log(
        "\n| build | rounds | p50 ms (median) | p99 ms (median, min–max) | p99.9 ms (median) | p99 as wrk counts it, ms (median) |",
      );
      console.log("|---|---|---|---|---|---|");
      const median = (xs: number[]) => percentile(xs, 50).toFixed(3);
      for (const [bin, rows] of untraced) {
        const p99s = rows.map((r) => r.p99);
        const spread = `${Math.min(...p99s).toFixed(3)}–${Math.max(...p99s).toFixed(3)}`;
        console.log(
          `| ${bin} | ${rows.length} | ${median(rows.map((r) => r.p50))} | ${median(p99s)} (${spread}) | ${median(rows.map((r) => r.p999))} | ${median(rows.map((r) => r.wrkP99))} |`,
        );
      }
    }
  } finally {
    await upstream.proc.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One build without the timeline: warmed up, then the loop's p50, p99 and p99.9. */
async function untracedRound(
  ctx: BenchContext,
  bin: string,
  label: string,
  bodyFile: string,
  body: string,
  warmup: number,
  seconds: number,
): Promise<{ p50: number; p99: number; p999: number; wrkP99: number; load: string }> {
  const server = await startModelgateServer({ ...ctx, modelgateBin: bin }, { label, workers: 1, core: 1 });
  try {
    const request = { url: server.base + CHAT_PATH, headers: server.headers, bodyFile };
    await wrk(request, { connections: 4, seconds: warmup, rate: 0 });
    await closedLoopC1(request.url, request.headers, body, 1);
    const load = loadAverage();
    const latencies = await closedLoopC1(request.url, request.headers, body, seconds);
    return {
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      p999: percentile(latencies, 99.9),
      wrkP99: wrkStyleP99(latencies),
      load,
    };
  } finally {
    await server.proc.stop();
  }
}

/** The p99 wrk's summary would print for these latencies (its coordinated-omission correction). */
function wrkStyleP99(latencies: readonly number[]): number {
  const total = latencies.reduce((sum, ms) => sum + ms, 0);
  return percentile(coCorrected(latencies, total / Math.max(1, latencies.length)), 99);
}

function report(
  bin: string,
  round: number,
  all: Stamp[],
  latencies: readonly number[],
  percent: number,
  load: string,
): void {
  // The measured window is the server's last cycles (the loop's requests, then the stop).
  const cycles = cyclesOf(all).slice(-latencies.length);
  const from = cycles[0]?.start ?? 0;
  const stamps = all.filter((s) => s.t >= from);
  const slow = attribute(stamps, cycles, percent);
  const lengths = cycles.map((c) => c.end - c.start);
  const count = (kind: string) => stamps.filter((s) => s.kind === kind).length;
  console.log(`\n## ${bin}, round ${round} (load ${load})\n`);
  console.log(
    `client at c=1: ${latencies.length} requests, p50 ${percentile(latencies, 50).toFixed(3)} ms, p99 ${percentile(latencies, 99).toFixed(3)} ms, p99.9 ${percentile(latencies, 99.9).toFixed(3)} ms, p99 as wrk counts it ${wrkStyleP99(latencies).toFixed(3)} ms; server cycles ${cycles.length}: p50 ${percentile(lengths, 50).toFixed(3)} ms, p99 ${percentile(lengths, 99).toFixed(3)} ms, p99.9 ${percentile(lengths, 99.9).toFixed(3)} ms`,
  );
  const per1000 = (n: number) => ((n * 1000) / Math.max(1, cycles.length)).toFixed(2);
  console.log(
    `per 1,000 requests: collections ${per1000(count("gc"))}, stalls ${per1000(count("stall"))}, store posts ${per1000(count("store_post"))}, store answers ${per1000(count("store_reply"))}, journal clears ${per1000(count("journal_clear"))}, timers ${per1000(count("timer"))}, intervals ${per1000(count("interval"))}, immediates ${per1000(count("immediate"))}`,
  );
  console.log("\nmedian segment, ms: ");
  for (const [i, name] of SEGMENTS.entries()) {
    const values = cycles.map((c) => c.segments[i] ?? 0);
    console.log(
      `  ${name}: p50 ${percentile(values, 50).toFixed(3)}, p99 ${percentile(values, 99).toFixed(3)}`,
    );
  }
  console.log(`\nslowest ${percent} % (${slow.length} cycles):\n`);
  console.log("| cause | share of slow requests | typical extra ms (median) | where (segment: count) |");
  console.log("|---|---|---|---|");
  for (const row of causeTable(slow))
    console.log(
      `| ${row.cause} | ${(row.share * 100).toFixed(0)} % | ${row.excessMs.toFixed(2)} | ${row.segments} |`,
    );
  const labels = new Map<string, { n: number; ms: number }>();
  for (const s of stamps) {
    if (s.kind !== "timer" && s.kind !== "interval" && s.kind !== "immediate") continue;
    const key = `${s.kind} ${s.label.slice(0, 70)}`;
    const seen = labels.get(key) ?? { n: 0, ms: 0 };
    labels.set(key, { n: seen.n + 1, ms: Math.max(seen.ms, s.value) });
  }
  console.log("\ncallbacks in the window (count, longest ms):");
  for (const [key, { n, ms }] of [...labels.entries()].sort((a, b) => b[1].n - a[1].n).slice(0, 15))
    console.log(`  ${n} × ${ms.toFixed(3)}  ${key}`);
}
