// The benchmark's one entry point: `bun bench/run.ts [--smoke]`. Builds the modelgate executable,
// starts the fixed upstream and every target on 127.0.0.1 pinned to cores, measures them side by
// side (the bench's own figures and the field's, by section), soaks them, writes
// bench/results/<stamp>.{md,json} (and latest.*), and stops only what it started. `--smoke` starts
// every target and has each answer once (plus a 1 s wrk run).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import { join, resolve } from "node:path";
import { writeVocabulary } from "../scripts/vocabulary.ts";
import { FIELD_SECTIONS, type FieldFigures, measureFieldSections, measureMemory } from "./field.ts";
import { measureTarget } from "./measure.ts";
import { idleRss } from "./memory-phases.ts";
import { measurePaths, type PathsReport } from "./paths.ts";
import { type Options, parseOptions, USAGE } from "./plan.ts";
import { BOTH_CORES, LOAD_CORE, loadAverage, type Proc, pinSelf, runBounded, TARGET_CORE } from "./procs.ts";
import { type RunInfo, renderMarkdown, type TargetResult } from "./report.ts";
import { probe, writeBodyFile } from "./requests.ts";
import { measureScaling } from "./scaling.ts";
import { soak } from "./soak.ts";
import { writeDelayBodyFile } from "./sustained.ts";
import {
  type BenchContext,
  type RunningTarget,
  SCALING_TARGETS,
  startBenchUpstream,
  startTarget,
  Unavailable,
} from "./targets.ts";
import { ensureTools, fileLimit, PEERS_DIR } from "./tools.ts";
import { type WrkRequest, wrk } from "./wrk.ts";

const ROOT = resolve(import.meta.dir, "..");
const startedAt = performance.now();
const say = (line: string) =>
  console.error(`[bench ${((performance.now() - startedAt) / 1000).toFixed(0).padStart(4)} s] ${line}`);

async function buildBinary(dir: string): Promise<string> {
  const outfile = join(dir, "bin", "modelgate");
  say("building the modelgate executable");
  writeVocabulary();
  const out = await runBounded(
    // --splitting as `npm run build`: modules imported lazily stay in chunks `serve` never parses.
    [process.execPath, "build", "--compile", "--splitting", join(ROOT, "src/main.ts"), "--outfile", outfile],
    300_000,
  );
  if (out.code !== 0) throw new Error(`bun build --compile failed:\n${out.stderr}${out.stdout}`);
  return outfile;
}

async function machine(): Promise<string> {
  const model = /^model name\s*:\s*(.+)$/m.exec(readFileSync("/proc/cpuinfo", "utf8"))?.[1] ?? "unknown CPU";
  const kernel = (await runBounded(["uname", "-r"], 5000)).stdout.trim();
  return `${cpus().length} cores (nproc), ${model}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB RAM, Linux ${kernel}`;
}

async function versions(): Promise<Record<string, string>> {
  const first = async (cmd: string[]) => {
    const out = await runBounded(cmd, 5000);
    return `${out.stdout}${out.stderr}`.split("\n")[0]?.trim() ?? "?";
  };
  let portkey = "not installed";
  try {
    const pkg = JSON.parse(
      readFileSync(join(PEERS_DIR, "node_modules/@portkey-ai/gateway/package.json"), "utf8"),
    );
    portkey = String(pkg.version);
  } catch {
    // Reported as not installed; the Portkey target says why it did not run.
  }
  return {
    bun: Bun.version,
    nginx: (await first(["nginx", "-v"])).replace("nginx version: ", ""),
    wrk: (await first(["wrk", "-v"])).split(" [")[0] ?? "?",
    node: await first(["node", "--version"]),
    "@portkey-ai/gateway": portkey,
  };
}

/**
 * Starts a target and checks it answers one non-stream and one stream request; with the memory
 * section, its idle RSS is taken first, before that first request.
 */
async function bringUp(
  name: RunningTarget["name"],
  ctx: BenchContext,
  running: RunningTarget[],
  plan: Options["plan"],
) {
  const result: TargetResult = { name, status: "ok" };
  try {
    const target = await startTarget(name, ctx);
    running.push(target);
    if (plan.mode === "full" && plan.sections.includes("memory") && !SCALING_TARGETS.has(name))
      result.idleRssBeforeFirstRequest = await idleRss(target.proc.pid, plan.field.idleMs);
    const answer = await probe(target.url, target.headers);
    if (answer.ok) {
      result.streamEvents = answer.streamEvents;
      return { result, target };
    }
    result.status =
      name === "modelgate" && answer.status === 404
        ? "endpoint not available"
        : `error: status ${answer.status}: ${answer.message}`;
  } catch (error) {
    result.status =
      error instanceof Unavailable ? `unavailable: ${error.message}` : `error: ${String(error)}`;
  }
  return { result, target: undefined };
}

function writeResults(outDir: string, info: RunInfo, results: TargetResult[], paths: PathsReport): string {
  mkdirSync(outDir, { recursive: true });
  const stamp = info.date.replace(/[:.]/g, "-");
  const markdown = renderMarkdown(info, results, paths);
  const json = JSON.stringify({ info, results, paths }, null, 2);
  const prefix = info.plan.mode === "smoke" ? "smoke-" : "";
  for (const base of [`${prefix}${stamp}`, `${prefix}latest`]) {
    writeFileSync(join(outDir, `${base}.md`), markdown);
    writeFileSync(join(outDir, `${base}.json`), json);
  }
  return join(outDir, `${prefix}latest.md`);
}

/**
 * One single-core target's sections: memory first (a fresh process under a fixed load), then the
 * bench's own figures, then the field's other sections. A field section that fails is named in the
 * status and the rest still run.
 */
async function measureOne(
  target: RunningTarget,
  result: TargetResult,
  io: { request: WrkRequest; delayBodyFile: string; upstreamStats: string },
  plan: Options["plan"],
): Promise<void> {
  const field: FieldFigures = {};
  const problems: string[] = [];
  const idle = result.idleRssBeforeFirstRequest;
  if (idle !== undefined) {
    say(`${target.name}: memory`);
    try {
      field.memory = await measureMemory(target, io.request, plan, idle);
    } catch (error) {
      problems.push(`memory: ${String(error)}`);
    }
  }
  if (plan.sections.includes("classic"))
    result.figures = await measureTarget(target, io.request, plan, io.upstreamStats, say);
  if (FIELD_SECTIONS.some((s) => s !== "memory" && plan.sections.includes(s))) {
    const requests = {
      plain: io.request,
      delayed: { ...io.request, bodyFile: io.delayBodyFile },
      upstreamStats: io.upstreamStats,
    };
    problems.push(...(await measureFieldSections(target, requests, plan, field, say)));
  }
  if (Object.keys(field).length > 0) result.field = field;
  if (problems.length > 0) result.status = `error: ${problems.join("; ")}`;
}

async function run(
  options: Options,
  ctx: BenchContext,
  running: RunningTarget[],
): Promise<{ results: TargetResult[]; paths: PathsReport }> {
  const { plan } = options;
  const bodyFile = writeBodyFile(ctx.dir);
  const delayBodyFile = writeDelayBodyFile(ctx.dir);
  const up: { result: TargetResult; target: RunningTarget | undefined }[] = [];
  for (const name of plan.targets) {
    say(`starting ${name}`);
    up.push(await bringUp(name, ctx, running, plan));
  }
  const upstreamStats = `http://127.0.0.1:${ctx.upstreamPort}/stats`;
  for (const { result, target } of up) {
    if (!target) continue;
    const request = { url: target.url, headers: target.headers, bodyFile };
    try {
      if (plan.mode === "smoke") {
        const once = await wrk(request, { connections: 2, seconds: 1, rate: 0 });
        if (once.requests === 0 || once.errorCount > 0) {
          result.status = `error: wrk got ${once.requests} requests, errors ${JSON.stringify(once.errors)}`;
        }
      } else {
        say(`measuring ${target.name}`);
        const workers = SCALING_TARGETS.get(target.name);
        if (workers === undefined)
          await measureOne(target, result, { request, delayBodyFile, upstreamStats }, plan);
        else if (plan.sections.includes("classic"))
          result.scaling = await measureScaling(target, request, plan, workers);
      }
    } catch (error) {
      result.status = `error: ${String(error)}`;
    }
  }
  const paths = await measurePaths(ctx, plan, say);
  const soakable = up.filter((u) => u.target && u.result.figures && u.result.status === "ok");
  if (plan.mode === "full" && soakable.length > 0) {
    say(`soaking ${soakable.map((u) => u.result.name).join(", ")} for ${plan.soakSeconds} s`);
    const soaked = await soak(
      soakable.map((u) => ({
        target: u.target as RunningTarget,
        request: { url: u.target?.url ?? "", headers: u.target?.headers ?? {}, bodyFile },
      })),
      plan,
    );
    for (const u of soakable) u.result.soak = soaked.get(u.result.name);
  }
  return { results: up.map((u) => u.result), paths };
}

async function main(argv: string[]): Promise<number> {
  if (argv.includes("--help") || argv.includes("-h")) {
    console.log(USAGE);
    return 0;
  }
  if (cpus().length < 2)
    throw new Error("the benchmark pins the target and the load to different cores: it needs 2");
  const options = parseOptions(argv, await fileLimit());
  pinSelf(LOAD_CORE);
  await ensureTools(say);
  const dir = mkdtempSync(join(tmpdir(), "modelgate-bench-"));
  const running: RunningTarget[] = [];
  let upstream: Proc | undefined;
  const stopAll = async () => {
    for (const target of running) for (const proc of target.owned) await proc.stop();
    await upstream?.stop();
  };
  const onSignal = () => void stopAll().then(() => process.exit(130));
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    const modelgateBin = options.bin ?? (await buildBinary(dir));
    const started = await startBenchUpstream(dir);
    upstream = started.proc;
    const ctx: BenchContext = {
      dir,
      upstream: started.proc,
      upstreamPort: started.port,
      modelgateBin,
      peersDir: PEERS_DIR,
      fileLimit: await fileLimit(),
    };
    const date = new Date().toISOString();
    const loadBefore = loadAverage();
    const { results, paths } = await run(options, ctx, running);
    const direct = results.find((r) => r.name === "direct")?.figures;
    const info: RunInfo = {
      date,
      command: `bun bench/run.ts ${argv.join(" ")}`.trim(),
      machine: await machine(),
      versions: await versions(),
      coreSplit: `load generator (wrk, stream clients, this orchestrator) and the upstream on core ${LOAD_CORE}; the target under test on core ${TARGET_CORE} (taskset), except modelgate-1p and modelgate-2p, whose processes may use cores ${BOTH_CORES} and so share core ${LOAD_CORE} with the load generator and the upstream`,
      plan: options.plan,
      loadAverage: `${loadBefore} before, ${loadAverage()} after (1, 5, 15 min; other processes on the machine compete for its 2 cores)`,
      wallSeconds: Math.round((performance.now() - startedAt) / 1000),
      upstreamCapacity: direct
        ? `fixed-response Bun server; direct capacity ${Math.round(direct.closed.rps)} req/s closed loop at ${direct.closed.connections} connections, sharing its core with the load generator`
        : "fixed-response Bun server",
    };
    const file = writeResults(options.out ?? join(import.meta.dir, "results"), info, results, paths);
    say(`wrote ${file}`);
    console.log(
      `BENCH_SUMMARY ${JSON.stringify(results.map((r) => ({ name: r.name, status: r.status, streamEvents: r.streamEvents })))}`,
    );
    console.log(
      `BENCH_PATHS ${JSON.stringify(paths.paths.map((p) => ({ name: p.name, status: p.status })))}`,
    );
    const failed = results.filter((r) => r.status !== "ok" && r.status !== "endpoint not available");
    const pathsFailed = paths.paths.filter((p) => p.status !== "ok");
    return failed.length + pathsFailed.length > 0 ? 1 : 0;
  } finally {
    await stopAll();
    rmSync(dir, { recursive: true, force: true });
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`[bench] ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
