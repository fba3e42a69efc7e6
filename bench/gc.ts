// Young-generation GC per request at a fixed rate: how many requests the event loop's JS heap serves
// between two eden collections, the bytes JSC counts per request (objects plus the "extra memory"
// native objects report: bodies, buffers, strings), and the pauses. Each target is started fresh
// with BUN_JSC_logGC=1 on the target core, warmed up at the rate, then measured over a window of
// wrk's Chat requests; the GC log lines of that window are parsed (the heap with the most
// collections is the main thread's; the store thread's Worker has a heap of its own). The bare Bun
// proxy runs beside as the floor. Several --bin alternate, N rounds, every round printed.
//
// A --bin may carry environment for that target after an @: `--bin dist/modelgate@BUN_JSC_x=1,Y=2`.
//
//   bun bench/gc.ts --bin PATH[@K=V,...] [--bin ...] [--no-bun-proxy] [--rate 2000] [--seconds 20]
//                   [--warmup-seconds 5] [--rounds 3] [--proxy-functions 2000,5000] [--proxy-ballast-mb 30]
//
// --proxy-functions N,… adds a bare Bun proxy per N that first compiles N distinct functions and
// keeps them; --proxy-ballast-mb M one that keeps M MB of plain objects: the eden pause grows with
// the first (live compiled code, CodeBlocks) and not with the second (old-space bytes).
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { wholeOption } from "./options.ts";
import { cpuSecondsPrecise, LOAD_CORE, loadAverage, type Proc, pinSelf } from "./procs.ts";
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
    "no-bun-proxy": { type: "boolean" },
    rate: { type: "string" },
    seconds: { type: "string" },
    "warmup-seconds": { type: "string" },
    rounds: { type: "string" },
    "meter-bytes": { type: "string" },
    "proxy-functions": { type: "string" },
    "proxy-ballast-mb": { type: "string" },
  },
  strict: true,
});

const whole = wholeOption;
const rate = whole("rate", values.rate, 2000);
const seconds = whole("seconds", values.seconds, 20);
const warmupSeconds = whole("warmup-seconds", values["warmup-seconds"], 5);
const rounds = whole("rounds", values.rounds, 3);
const bins = values.bin ?? [];
if (bins.length === 0) throw new Error("--bin: give at least one modelgate executable (npm run build)");

/** One collection of one heap, from its `START … END]` log lines. */
export interface Collection {
  heap: string;
  eden: boolean;
  /** Bytes JSC counted (heap capacity plus extra memory) when it started and after it. */
  beforeKb: number;
  afterKb: number;
  /** The longest stop-the-world pause of the collection. */
  pauseMs: number;
  /** Offset of its START line in the log. */
  at: number;
}

const START = /\[GC<(0x[0-9a-f]+)>: START \S+ (\d+)kb => (\w+)Collection/g;
const PAUSE = /p=([0-9.]+)ms/g;
const END = /=> (\d+)kb, p=[0-9.]+ms \(max [0-9.]+\), cycle [0-9.]+ms END\]/;

/** Every collection in a BUN_JSC_logGC log (a concurrent full collection spans several lines). */
export function parseGcLog(log: string): Collection[] {
  const starts = [...log.matchAll(START)];
  return starts.flatMap((start, i): Collection[] => {
    const heap = start[1] ?? "";
    // The cycle's text runs to the next START of the same heap (other heaps' lines may interleave;
    // their pauses are on lines that name them, which this heap's cycle text skips).
    const next = starts.slice(i + 1).find((s) => s[1] === heap);
    const text = log.slice(start.index, next?.index ?? log.length);
    const own = text
      .split("\n")
      .filter((line) => !line.startsWith("[GC<") || line.startsWith(`[GC<${heap}>`))
      .join("\n");
    const end = END.exec(own);
    if (end === null) return [];
    const pauses = [...own.slice(0, (end.index ?? 0) + end[0].length).matchAll(PAUSE)].map((m) =>
      Number(m[1]),
    );
    return [
      {
        heap,
        eden: start[3] === "Eden",
        beforeKb: Number(start[2]),
        afterKb: Number(end[1]),
        pauseMs: Math.max(0, ...pauses),
        at: start.index ?? 0,
      },
    ];
  });
}

export interface GcFigures {
  requests: number;
  rps: number;
  p99Us: number;
  edens: number;
  fulls: number;
  requestsPerEden: number;
  /** KB counted between collections (start of one minus end of the previous), per request. */
  kbPerRequest: number;
  /** Median KB allocated between two collections: the eden size JSC chose. */
  edenKb: number;
  edenPauseP50Ms: number;
  edenPauseMaxMs: number;
  /** Every pause of the main heap in the window (eden and full), per 1,000 requests. */
  pauseMsPer1000: number;
  fullPauseMaxMs: number;
  cpuUsPerRequest: number;
}

/** The main heap's collections that started at or after `from` in the log, with the one before. */
function figuresOfWindow(
  log: string,
  from: number,
): Omit<GcFigures, "requests" | "rps" | "p99Us" | "cpuUsPerRequest"> {
  const all = parseGcLog(log);
  const counts = new Map<string, number>();
  for (const c of all) if (c.at >= from) counts.set(c.heap, (counts.get(c.heap) ?? 0) + 1);
  const main = [...counts.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
  const mine = all.filter((c) => c.heap === main);
  const allocated: number[] = [];
  const inWindow = mine.filter((c, i) => {
    if (c.at < from) return false;
    const before = mine[i - 1];
    if (before !== undefined) allocated.push(c.beforeKb - before.afterKb);
    return true;
  });
  const edens = inWindow.filter((c) => c.eden);
  const fulls = inWindow.filter((c) => !c.eden);
  const edenPauses = edens.map((c) => c.pauseMs);
  return {
    edens: edens.length,
    fulls: fulls.length,
    requestsPerEden: 0,
    kbPerRequest: allocated.reduce((s, kb) => s + kb, 0),
    edenKb: percentile(allocated, 50),
    edenPauseP50Ms: percentile(edenPauses, 50),
    edenPauseMaxMs: Math.max(0, ...edenPauses),
    pauseMsPer1000: inWindow.reduce((sum, c) => sum + c.pauseMs, 0),
    fullPauseMaxMs: Math.max(0, ...fulls.map((c) => c.pauseMs)),
  };
}

/** Warms up at the rate, then measures one window of `seconds`. */
async function measure(proc: Proc, url: string, headers: Record<string, string>, bodyFile: string) {
  const request = { url, headers, bodyFile };
  const connections = connectionsFor(rate);
  await wrk(request, { connections, seconds: warmupSeconds, rate });
  const from = readFileSync(proc.logFile, "utf8").length;
  const cpuBefore = cpuSecondsPrecise(proc.pid);
  const result = await wrk(request, { connections, seconds, rate });
  const cpu = cpuSecondsPrecise(proc.pid) - cpuBefore;
  // The last collection's END line may still be on its way to the log.
  await Bun.sleep(200);
  const gc = figuresOfWindow(readFileSync(proc.logFile, "utf8"), from);
  return {
    ...gc,
    requests: result.requests,
    rps: result.rps,
    p99Us: result.latency_us.p99,
    requestsPerEden: gc.edens === 0 ? result.requests : result.requests / gc.edens,
    kbPerRequest: gc.kbPerRequest / result.requests,
    pauseMsPer1000: (gc.pauseMsPer1000 * 1000) / result.requests,
    cpuUsPerRequest: (cpu * 1e6) / result.requests,
  } satisfies GcFigures;
}

// --meter-bytes N: JSC collects every N bytes allocated (its gcMaxHeapSize option replaces the
// eden size it would choose from the live heap), so N ÷ requests per collection is the bytes a
// request allocates, whatever the heap's size; without it, the eden size is the target's own.
const meterBytes =
  values["meter-bytes"] === undefined ? undefined : whole("meter-bytes", values["meter-bytes"], 0);
const LOG_GC: Record<string, string> = {
  BUN_JSC_logGC: "1",
  ...(meterBytes === undefined
    ? {}
    : {
        BUN_JSC_gcMaxHeapSize: String(meterBytes),
        // The other triggers off: JSC's activity timers (a collection when enough time passed for
        // the bytes allocated) and Bun's own GC timer.
        BUN_JSC_percentCPUPerMBForEdenTimer: "0.0000001",
        BUN_JSC_percentCPUPerMBForFullTimer: "0.0000001",
        BUN_GC_TIMER_DISABLE: "1",
      }),
};

pinSelf(LOAD_CORE);
if (Bun.which("wrk") === null)
  throw new Error("wrk is missing: apt-get install wrk (or run bench/run.ts once)");
const dir = mkdtempSync(join(tmpdir(), "modelgate-gc-"));
const upstream = await startBenchUpstream(dir);
try {
  const ctx = modelgateContext(dir, upstream);
  const bodyFile = writeBodyFile(dir);
  const proxies = new Map<string, Record<string, string>>(values["no-bun-proxy"] ? [] : [["bun-proxy", {}]]);
  for (const n of (values["proxy-functions"] ?? "").split(",").filter((x) => x !== ""))
    proxies.set(`bun-proxy+${n} functions`, { BENCH_PROXY_FUNCTIONS: n });
  if (values["proxy-ballast-mb"] !== undefined)
    proxies.set(`bun-proxy+${values["proxy-ballast-mb"]} MB`, {
      BENCH_PROXY_BALLAST_MB: values["proxy-ballast-mb"],
    });
  const labels = [...bins, ...proxies.keys()];
  const results = new Map<string, GcFigures[]>(labels.map((l) => [l, []]));
  const loadBefore = loadAverage();
  for (let round = 1; round <= rounds; round++) {
    for (const [i, label] of labels.entries()) {
      let proc: Proc;
      let url: string;
      let headers: Record<string, string>;
      const proxyEnv = proxies.get(label);
      if (proxyEnv !== undefined) {
        const target = await startBunProxy(ctx, { ...LOG_GC, ...proxyEnv });
        ({ proc, url, headers } = target);
      } else {
        const [bin = "", extra = ""] = label.split("@");
        const env = Object.fromEntries(extra === "" ? [] : extra.split(",").map((kv) => kv.split("=", 2)));
        const server = await startModelgateServer(
          { ...ctx, modelgateBin: bin },
          { label: `modelgate-${round}-${i}`, workers: 1, core: 1, env: { ...LOG_GC, ...env } },
        );
        ({ proc, headers } = server);
        url = server.base + CHAT_PATH;
      }
      try {
        const figures = await measure(proc, url, headers, bodyFile);
        results.get(label)?.push(figures);
        console.error(`round ${round} ${label}: ${JSON.stringify(figures)}`);
      } finally {
        await proc.stop();
      }
    }
  }
  console.log(
    `GC at ${rate} req/s, ${seconds} s measured after ${warmupSeconds} s warm-up, Chat non-stream, ${rounds} rounds alternating; load ${loadBefore} before, ${loadAverage()} after`,
  );
  console.log(
    "| target | round | req/s | requests per eden GC | eden GCs | full GCs | KB/request (JSC-counted) | eden KB (median) | eden pause p50 / max ms | full pause max ms | pause ms per 1,000 requests | CPU µs/req | p99 ms |",
  );
  console.log("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
  for (const [label, rows] of results) {
    for (const [r, f] of rows.entries()) {
      console.log(
        `| ${label} | ${r + 1} | ${f.rps.toFixed(0)} | ${f.requestsPerEden.toFixed(0)} | ${f.edens} | ${f.fulls} | ${f.kbPerRequest.toFixed(2)} | ${f.edenKb} | ${f.edenPauseP50Ms.toFixed(2)} / ${f.edenPauseMaxMs.toFixed(2)} | ${f.fullPauseMaxMs.toFixed(2)} | ${f.pauseMsPer1000.toFixed(2)} | ${f.cpuUsPerRequest.toFixed(1)} | ${(f.p99Us / 1000).toFixed(2)} |`,
      );
    }
  }
} finally {
  await upstream.proc.stop();
  rmSync(dir, { recursive: true, force: true });
}
