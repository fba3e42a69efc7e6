// What tracing costs per request:
// `bun bench/otel-cpu.ts [--runs 5] [--n 2000] [--c 8] [--bin PATH] [--baseline PATH]`.
// Starts the bench upstream (bench/upstream.ts) and an in-process OTLP/HTTP receiver on the load
// core, and two copies of the compiled gateway on the target core: one with telemetry off, one
// exporting every trace (telemetry.sampling_ratio = 1.0). Rounds alternate between the two, so the
// shared machine's noise falls on both; each round sends N non-stream Chat requests at concurrency C
// and reads the gateway's CPU time from /proc after its batch exporter's next flush (the export is
// part of the cost). Reports the CPU µs per request of each side per round and their medians.
// --baseline adds a third side: another build (e.g. main before tracing existed), telemetry off,
// to show that with tracing off the request path costs what it did.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { writeVocabulary } from "../scripts/vocabulary.ts";
import {
  cpuSeconds,
  freePort,
  LOAD_CORE,
  type Proc,
  pinSelf,
  runBounded,
  spawnPinned,
  TARGET_CORE,
  waitReady,
} from "./procs.ts";
import { MODEL, provisionBenchKey } from "./targets.ts";

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "5" },
    n: { type: "string", default: "2000" },
    c: { type: "string", default: "8" },
    bin: { type: "string" },
    baseline: { type: "string" },
  },
});
const RUNS = Number(values.runs);
const N = Number(values.n);
const C = Number(values.c);
const ROOT = resolve(import.meta.dir, "..");
/** Longer than the batch exporter's 1 s delay: a round's spans are exported before CPU is read. */
const SETTLE_MS = 1500;

type SideName = "off" | "on" | "baseline";

interface Side {
  name: SideName;
  proc: Proc;
  url: string;
  key: string;
}

function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

async function startSide(
  name: SideName,
  bin: string,
  dir: string,
  upstreamPort: number,
  otlp: string,
): Promise<Side> {
  const port = freePort();
  const home = join(dir, name);
  mkdirSync(home, { recursive: true });
  const configFile = join(home, "modelgate.toml");
  const telemetry = name === "on" ? `[telemetry]\notlp_endpoint = "${otlp}"\nsampling_ratio = 1.0\n` : "";
  writeFileSync(
    configFile,
    `[server]\nlisten = "127.0.0.1:${port}"\n[store]\nurl = "sqlite://${join(home, "modelgate.db")}"\n[bootstrap]\nenabled = false\n${telemetry}[[channels]]\nkind = "openai-chat"\nname = "bench-upstream"\nbase_url = "http://127.0.0.1:${upstreamPort}/v1"\nmodels = ["${MODEL}"]\n`,
  );
  const config = ["--config", configFile];
  const key = await provisionBenchKey(bin, configFile);
  const proc = spawnPinned({
    name: `gateway-${name}`,
    cmd: [bin, "serve", ...config],
    core: TARGET_CORE,
    dir: home,
  });
  const url = `http://127.0.0.1:${port}`;
  await waitReady(proc, async () => (await fetch(`${url}/healthz`)).ok);
  return { name, proc, url, key };
}

async function load(side: Side, count: number): Promise<void> {
  const body = JSON.stringify({ model: MODEL, messages: [{ role: "user", content: "Say hello." }] });
  let next = 0;
  await Promise.all(
    Array.from({ length: C }, async () => {
      while (next < count) {
        next++;
        const response = await fetch(`${side.url}/v1/chat/completions`, {
          method: "POST",
          headers: { authorization: `Bearer ${side.key}`, "content-type": "application/json" },
          body,
        });
        if (response.status !== 200)
          throw new Error(`${side.name}: ${response.status} ${await response.text()}`);
        await response.arrayBuffer();
      }
    }),
  );
}

/** CPU µs per request of one round on `side` (export flushes included). */
async function round(side: Side): Promise<number> {
  await Bun.sleep(SETTLE_MS);
  const before = cpuSeconds(side.proc.pid);
  await load(side, N);
  await Bun.sleep(SETTLE_MS);
  return ((cpuSeconds(side.proc.pid) - before) * 1e6) / N;
}

async function main(): Promise<void> {
  pinSelf(LOAD_CORE);
  const dir = join(tmpdir(), `modelgate-otel-bench-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  let bin = values.bin;
  if (bin === undefined) {
    bin = join(dir, "modelgate");
    writeVocabulary();
    const built = await runBounded(
      [process.execPath, "build", "--compile", join(ROOT, "src/main.ts"), "--outfile", bin],
      300_000,
    );
    if (built.code !== 0) throw new Error(`bun build --compile failed:\n${built.stderr}`);
  }
  let spans = 0;
  const receiver = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const body = (await request.json()) as { resourceSpans?: { scopeSpans?: { spans?: unknown[] }[] }[] };
      for (const rs of body.resourceSpans ?? [])
        for (const ss of rs.scopeSpans ?? []) spans += ss.spans?.length ?? 0;
      return Response.json({});
    },
  });
  const upstreamPort = freePort();
  const upstream = spawnPinned({
    name: "upstream",
    cmd: [process.execPath, join(import.meta.dir, "upstream.ts"), String(upstreamPort)],
    core: LOAD_CORE,
    dir,
  });
  const sides: Side[] = [];
  try {
    await waitReady(upstream, async () => readFileSync(upstream.logFile, "utf8").includes("listening"));
    const otlp = `http://127.0.0.1:${receiver.port}`;
    sides.push(await startSide("off", bin, dir, upstreamPort, otlp));
    sides.push(await startSide("on", bin, dir, upstreamPort, otlp));
    if (values.baseline !== undefined)
      sides.push(await startSide("baseline", values.baseline, dir, upstreamPort, otlp));
    for (const side of sides) await load(side, 500); // warm-up: JIT, pools, first exports
    const figures: Record<SideName, number[]> = { off: [], on: [], baseline: [] };
    for (let run = 0; run < RUNS; run++) {
      // Alternate which side goes first so a drift in the machine's load favours neither.
      const order = run % 2 === 0 ? sides : [...sides].reverse();
      for (const side of order) figures[side.name].push(await round(side));
    }
    const off = median(figures.off);
    const on = median(figures.on);
    console.log(
      `Tracing cost, ${N} non-stream Chat requests per round at concurrency ${C}, ${RUNS} rounds (${new Date().toISOString()}); ${spans} spans received`,
    );
    console.log("| telemetry | CPU µs per request, each round | median |");
    console.log("|---|---|---|");
    console.log(`| off | ${figures.off.map((x) => x.toFixed(0)).join(", ")} | ${off.toFixed(0)} |`);
    console.log(
      `| on, sampling 1.0 | ${figures.on.map((x) => x.toFixed(0)).join(", ")} | ${on.toFixed(0)} |`,
    );
    if (figures.baseline.length > 0) {
      const base = median(figures.baseline);
      const each = figures.baseline.map((x) => x.toFixed(0)).join(", ");
      console.log(`| baseline build, off | ${each} | ${base.toFixed(0)} |`);
      const paired = median(figures.off.map((x, i) => x - (figures.baseline[i] ?? x)));
      console.log(
        `Off against the baseline build: ${(off - base).toFixed(0)} µs CPU per request (median of the per-round differences: ${paired.toFixed(0)} µs).`,
      );
    }
    const pairedOn = median(figures.on.map((x, i) => x - (figures.off[i] ?? x)));
    console.log(`Median of the per-round differences on − off: ${pairedOn.toFixed(0)} µs.`);
    console.log(
      `Added by tracing: ${(on - off).toFixed(0)} µs CPU per request (${((on / off - 1) * 100).toFixed(0)} %).`,
    );
  } finally {
    for (const side of sides) await side.proc.stop();
    await upstream.stop();
    await receiver.stop(true);
  }
}

await main();
