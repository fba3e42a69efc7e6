// CPU per request of several modelgate builds side by side, robust to a loaded machine: every
// target is started once (the bench's config: one openai-chat channel, a key with limits on, access
// log off) and warmed up long enough for the JIT to settle — its compiler thread spends ~70–90 µs a
// request for the first ~15,000 requests and ~0–2 after — then measured in interleaved windows of
// the non-stream Chat request at a fixed rate (the order reversed every round). Each window's CPU is
// every thread's run time (schedstat), also given per thread by name (main, the store thread's
// `Worker`, Bun's `HTTP Client`, the JIT's `JITWorker`, …), so a cost that moved off the event loop
// is still counted and seen where it went. The first target is the baseline: each other target's
// ratio to it is given per round (paired), with the median and the spread.
//
//   bun bench/cpu-ab.ts --bin A[@K=V,...] [--bin B ...] [--before-wave C] [--bun-proxy]
//                       [--rate 1000] [--seconds 2] [--rounds 6] [--warmup-rate 3000] [--warmup-seconds 7]
//                       [--latency 10]
//
// --latency S then measures the same targets and the upstream alone (direct) at concurrency 1
// (one wrk connection, closed loop) for S seconds each, interleaved the same way over the rounds:
// each target's p50 and p99 and its added p99 (its p99 minus direct's in the same round).
//
// --before-wave takes a build from before `server.access_log` (e4f527c, the commit before wave two),
// started with a config without that setting; it is the baseline when given.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { wholeOption } from "./options.ts";
import { LOAD_CORE, loadAverage, type Proc, pinSelf, threadTimes } from "./procs.ts";
import { writeBodyFile } from "./requests.ts";
import { percentile } from "./stats.ts";
import {
  CHAT_PATH,
  modelgateContext,
  startBenchUpstream,
  startBunProxy,
  startModelgateServer,
} from "./targets.ts";
import { connectionsFor, wrk } from "./wrk.ts";

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    bin: { type: "string", multiple: true },
    "before-wave": { type: "string" },
    "bun-proxy": { type: "boolean" },
    rate: { type: "string" },
    seconds: { type: "string" },
    rounds: { type: "string" },
    "warmup-rate": { type: "string" },
    "warmup-seconds": { type: "string" },
    latency: { type: "string" },
  },
  strict: true,
});

const whole = wholeOption;
const rate = whole("rate", values.rate, 1000);
const seconds = whole("seconds", values.seconds, 2);
const rounds = whole("rounds", values.rounds, 6);
const warmupRate = whole("warmup-rate", values["warmup-rate"], 3000);
const warmupSeconds = whole("warmup-seconds", values["warmup-seconds"], 7);
const latencySeconds = values.latency === undefined ? undefined : whole("latency", values.latency, 10);
const before = values["before-wave"];
if ((values.bin ?? []).length + (before === undefined ? 0 : 1) < 2 && !values["bun-proxy"]) {
  throw new Error("give at least two targets: --bin A --bin B, --before-wave C, --bun-proxy");
}

interface Target {
  label: string;
  proc: Proc;
  url: string;
  headers: Record<string, string>;
  /** µs of CPU per request, one per round. */
  windows: number[];
  /** µs per request by thread name, summed over the rounds. */
  threads: Map<string, number>;
}

/** Concurrency 1, interleaved with the upstream alone: p50, p99 and the added p99 per target. */
async function latencyRounds(measured: Target[], bodyFile: string): Promise<void> {
  const direct = { label: "direct", url: `http://127.0.0.1:${upstream.port}${CHAT_PATH}`, headers: {} };
  const all = [direct, ...measured];
  const figures = new Map<string, { p50: number[]; p99: number[]; added: number[] }>(
    all.map((t) => [t.label, { p50: [], p99: [], added: [] }]),
  );
  for (let round = 0; round < rounds; round++) {
    const p99s = new Map<string, number>();
    for (const t of round % 2 === 0 ? all : [...all].reverse()) {
      const request = { url: t.url, headers: t.headers, bodyFile };
      const result = await wrk(request, { connections: 1, seconds: latencySeconds ?? 10, rate: 0 });
      const f = figures.get(t.label);
      f?.p50.push(result.latency_us.p50);
      f?.p99.push(result.latency_us.p99);
      p99s.set(t.label, result.latency_us.p99);
    }
    for (const t of measured)
      figures.get(t.label)?.added.push((p99s.get(t.label) ?? 0) - (p99s.get("direct") ?? 0));
  }
  console.log(
    `\nConcurrency 1, closed loop, ${rounds} interleaved ${latencySeconds} s windows; load ${loadAverage()}`,
  );
  console.log("| target | p50 µs, median | p99 µs, median (min–max) | added p99 µs, median (min–max) |");
  console.log("|---|---|---|---|");
  const range = (xs: number[]) =>
    `${percentile(xs, 50).toFixed(0)} (${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)})`;
  for (const t of all) {
    const f = figures.get(t.label);
    if (!f) continue;
    console.log(
      `| ${t.label} | ${percentile(f.p50, 50).toFixed(0)} | ${range(f.p99)} | ${f.added.length > 0 ? range(f.added) : "–"} |`,
    );
  }
}

pinSelf(LOAD_CORE);
const dir = mkdtempSync(join(tmpdir(), "modelgate-cpu-ab-"));
const upstream = await startBenchUpstream(dir);
const targets: Target[] = [];
try {
  const ctx = modelgateContext(dir, upstream);
  const bins = [
    ...(before === undefined ? [] : [{ spec: before, beforeAccessLog: true }]),
    ...(values.bin ?? []).map((spec) => ({ spec, beforeAccessLog: false })),
  ];
  for (const [i, { spec, beforeAccessLog }] of bins.entries()) {
    const [bin = "", extra = ""] = spec.split("@");
    const env = Object.fromEntries(extra === "" ? [] : extra.split(",").map((kv) => kv.split("=", 2)));
    const server = await startModelgateServer(
      { ...ctx, modelgateBin: bin },
      { label: `modelgate-${i}`, workers: 1, core: 1, env, beforeAccessLog },
    );
    const label = beforeAccessLog ? `${spec} (before wave two)` : spec;
    targets.push({ label, ...server, url: server.base + CHAT_PATH, windows: [], threads: new Map() });
  }
  if (values["bun-proxy"]) {
    const proxy = await startBunProxy(ctx);
    targets.push({ label: "bun-proxy", ...proxy, windows: [], threads: new Map() });
  }
  const bodyFile = writeBodyFile(dir);
  for (const t of targets) {
    const request = { url: t.url, headers: t.headers, bodyFile };
    await wrk(request, { connections: connectionsFor(warmupRate), seconds: warmupSeconds, rate: warmupRate });
  }
  const loadBefore = loadAverage();
  for (let round = 0; round < rounds; round++) {
    for (const t of round % 2 === 0 ? targets : [...targets].reverse()) {
      const request = { url: t.url, headers: t.headers, bodyFile };
      const start = threadTimes(t.proc.pid);
      const result = await wrk(request, { connections: connectionsFor(rate), seconds, rate });
      const end = threadTimes(t.proc.pid);
      if (result.errorCount > 0)
        console.error(`${t.label}: ${result.errorCount} errors in round ${round + 1}`);
      let total = 0;
      for (const [name, ns] of end) {
        const us = (ns - (start.get(name) ?? 0)) / 1000 / result.requests;
        total += us;
        t.threads.set(name, (t.threads.get(name) ?? 0) + us / rounds);
      }
      t.windows.push(total);
    }
  }
  console.log(
    `CPU per request, non-stream Chat at ${rate} req/s, ${rounds} interleaved ${seconds} s windows after ${warmupSeconds} s at ${warmupRate} req/s each; load ${loadBefore} before, ${loadAverage()} after`,
  );
  console.log(
    "| target | µs/request median (min–max) | paired ratio to the first, median (min–max) | by thread, µs/request (mean) |",
  );
  console.log("|---|---|---|---|");
  const base = targets[0]?.windows ?? [];
  for (const t of targets) {
    const ratios = t.windows.map((w, i) => w / (base[i] ?? w));
    const threads = [...t.threads]
      .filter(([, us]) => us >= 0.5)
      .sort((a, b) => b[1] - a[1])
      .map(([name, us]) => `${name} ${us.toFixed(1)}`)
      .join(", ");
    console.log(
      `| ${t.label} | ${percentile(t.windows, 50).toFixed(1)} (${Math.min(...t.windows).toFixed(1)}–${Math.max(...t.windows).toFixed(1)}) | ${percentile(ratios, 50).toFixed(3)} (${Math.min(...ratios).toFixed(3)}–${Math.max(...ratios).toFixed(3)}) | ${threads} |`,
    );
  }
  if (latencySeconds !== undefined) await latencyRounds(targets, bodyFile);
} finally {
  for (const t of targets) await t.proc.stop();
  await upstream.proc.stop();
  rmSync(dir, { recursive: true, force: true });
}
