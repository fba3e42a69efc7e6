// Idle memory of the compiled `serve`, split by what the pages are: the executable file's own pages
// (Bun's machine code and the embedded bundle), other files (shared libraries), the malloc heap and
// anonymous mappings (the JS heap, JIT code, allocator arenas), from /proc/PID/smaps and
// smaps_rollup. Several executables are started alternately, N rounds each, on one config (one
// openai-chat channel to the bench upstream, one key), and measured 3 s after they log that they
// listen, before any request; then each fresh process gets one streamed Chat request (its time to
// first byte shows work deferred to the first request, like reading the tokenizer's vocabulary) and
// is measured again once that request has settled. The medians side by side with the load
// average, so builds can be compared in one run.
//
// The executable's resident pages depend on how its file sits in the page cache, not only on what
// the process touches: a fault maps the whole cached folio around it, and a file read whole (or
// just written by the compiler) is cached in larger folios than one paged in by a fresh start. Two
// builds of the same source measured 63.3 and 60.8 MB that way (2026-11-27). So before each start
// the file's cached pages are dropped (`dd iflag=nocache`, after an fsync) and the process pages it
// in as after a reboot; `--warm` leaves the cache as it is. `--floor` also measures, the same way
// and in the same rounds, a compiled bare `Bun.serve` answering "ok": what any Bun server holds.
//
//   bun bench/idle-memory.ts --bin PATH [--bin PATH ...] [--rounds N] [--settle-ms MS] [--warm] [--floor]
import { closeSync, fsyncSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { freePort, loadAverage, runBounded, spawnPinned, TARGET_CORE, waitReady } from "./procs.ts";
import { STREAM_BODY } from "./requests.ts";
import { percentile } from "./stats.ts";
import { CHAT_PATH, provisionBenchKey, startBenchUpstream } from "./targets.ts";

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    bin: { type: "string", multiple: true },
    rounds: { type: "string" },
    "settle-ms": { type: "string" },
    warm: { type: "boolean" },
    floor: { type: "boolean" },
  },
  strict: true,
});
const bins = values.bin ?? [];
if (bins.length === 0)
  throw new Error("--bin: give at least one modelgate executable (bun build --compile src/main.ts)");
const rounds = Number(values.rounds ?? "3");
const settleMs = Number(values["settle-ms"] ?? "3000");
if (!Number.isInteger(rounds) || rounds < 1)
  throw new Error(`--rounds: expected a whole number ≥ 1, got ${values.rounds}`);
if (!Number.isFinite(settleMs) || settleMs < 0)
  throw new Error(`--settle-ms: expected milliseconds, got ${values["settle-ms"]}`);

export interface MemorySplit {
  rssMb: number;
  /** Resident pages mapped from the executable file itself. */
  executableMb: number;
  /** Of them: machine code (r-x), read-only data (r--), and the writable segment (rw-: data and the embedded bundle, `.bun`). */
  executableCodeMb: number;
  executableRodataMb: number;
  executableRwMb: number;
  /** Resident pages of other files (shared libraries, locale data). */
  otherFilesMb: number;
  /** Anonymous resident memory (smaps_rollup `Anonymous`): heaps, JIT code, arenas, stacks. */
  anonymousMb: number;
  /** Of it: the brk heap (`[heap]`). */
  brkHeapMb: number;
}

const MB = 1024;

/** Sums smaps' Rss by mapping kind; Anonymous from smaps_rollup. */
export function memorySplit(pid: number, executable: string): MemorySplit {
  let path = "";
  let perms = "";
  const byPerms = new Map<string, number>();
  let executableKb = 0;
  let otherKb = 0;
  let heapKb = 0;
  for (const line of readFileSync(`/proc/${pid}/smaps`, "utf8").split("\n")) {
    const header = /^[0-9a-f]+-[0-9a-f]+ (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (header) {
      perms = header[1] ?? "";
      path = header[2] ?? "";
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (!rss) continue;
    const kb = Number(rss[1]);
    if (path === executable) {
      executableKb += kb;
      const kind = perms.slice(0, 3);
      byPerms.set(kind, (byPerms.get(kind) ?? 0) + kb);
    } else if (path === "[heap]") heapKb += kb;
    else if (path.startsWith("/") && !path.startsWith("/memfd:")) otherKb += kb;
  }
  const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(rollup)?.[1] ?? 0);
  return {
    rssMb: field("Rss") / MB,
    executableMb: executableKb / MB,
    executableCodeMb: (byPerms.get("r-x") ?? 0) / MB,
    executableRodataMb: (byPerms.get("r--") ?? 0) / MB,
    executableRwMb: (byPerms.get("rw-") ?? 0) / MB,
    otherFilesMb: otherKb / MB,
    anonymousMb: field("Anonymous") / MB,
    brkHeapMb: heapKb / MB,
  };
}

interface Sample {
  idle: MemorySplit;
  /** Milliseconds from sending the first streamed request to its first body bytes. */
  firstTtfbMs: number;
  /** RSS once that request has been answered and settled. */
  afterFirstMb: number;
}

/** Sends one streamed Chat request; returns the milliseconds to its first body bytes, after reading it all. */
async function firstStreamTtfb(base: string, key: string): Promise<number> {
  const started = performance.now();
  const response = await fetch(base + CHAT_PATH, {
    method: "POST",
    headers: { Authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: STREAM_BODY,
  });
  if (!response.ok || !response.body) throw new Error(`first request: HTTP ${response.status}`);
  const reader = response.body.getReader();
  let ttfb: number | undefined;
  for (;;) {
    const { done } = await reader.read();
    ttfb ??= performance.now() - started;
    if (done) return ttfb;
  }
}

/** Drops the file's pages from the page cache (written back first: dirty pages cannot be dropped). */
async function dropCachedPages(file: string): Promise<void> {
  const fd = openSync(file, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  const dd = await runBounded(["dd", `if=${file}`, "iflag=nocache", "count=0", "status=none"], 10_000);
  if (dd.code !== 0) throw new Error(`dd iflag=nocache ${file} failed: ${dd.stderr}`);
}

async function measureOnce(bin: string, dir: string, upstreamPort: number): Promise<Sample> {
  const port = freePort();
  const run = mkdtempSync(join(dir, "serve-"));
  const configFile = join(run, "modelgate.toml");
  writeFileSync(
    configFile,
    `[server]\nlisten = "127.0.0.1:${port}"\n\n[store]\nurl = "sqlite://${join(run, "modelgate.db")}"\n\n[bootstrap]\nenabled = false\n\n[[channels]]\nkind = "openai-chat"\nname = "idle"\nbase_url = "http://127.0.0.1:${upstreamPort}/v1"\nmodels = ["modelx-5.5"]\n`,
  );
  const key = await provisionBenchKey(bin, configFile);
  const executable = (await runBounded(["readlink", "-f", bin], 5000)).stdout.trim();
  if (!values.warm) await dropCachedPages(executable);
  const proc = spawnPinned({
    name: "serve",
    cmd: [bin, "serve", "--config", configFile],
    core: TARGET_CORE,
    dir: run,
  });
  try {
    const listening = () => readFileSync(proc.logFile, "utf8").includes('"msg":"modelgate listening"');
    await waitReady(proc, async () => listening());
    await Bun.sleep(settleMs);
    const idle = memorySplit(proc.pid, executable);
    const firstTtfbMs = await firstStreamTtfb(`http://127.0.0.1:${port}`, key);
    await Bun.sleep(settleMs);
    return { idle, firstTtfbMs, afterFirstMb: memorySplit(proc.pid, executable).rssMb };
  } finally {
    await proc.stop();
  }
}

const FLOOR_SOURCE = `const server = Bun.serve({ hostname: "127.0.0.1", port: Number(process.argv[2]), fetch: () => new Response("ok") });
console.log("listening on", server.port);
`;

/** Compiles the bare Bun.serve of `--floor` with the Bun running this script. */
async function buildFloor(dir: string): Promise<string> {
  const source = join(dir, "floor.ts");
  const outfile = join(dir, "bun-serve-floor");
  writeFileSync(source, FLOOR_SOURCE);
  const build = await runBounded(
    [process.execPath, "build", "--compile", "--minify", source, "--outfile", outfile],
    120_000,
  );
  if (build.code !== 0) throw new Error(`compiling the floor failed: ${build.stderr}`);
  return outfile;
}

/** The floor's idle memory, measured as a build's is (its first request is not measured). */
async function measureFloor(floor: string, dir: string): Promise<MemorySplit> {
  const port = freePort();
  if (!values.warm) await dropCachedPages(floor);
  const proc = spawnPinned({ name: "floor", cmd: [floor, String(port)], core: TARGET_CORE, dir });
  try {
    await waitReady(proc, async () => readFileSync(proc.logFile, "utf8").includes("listening on"));
    await Bun.sleep(settleMs);
    return memorySplit(proc.pid, floor);
  } finally {
    await proc.stop();
  }
}

const median = (xs: number[]) => percentile(xs, 50);
const load = loadAverage;

const dir = mkdtempSync(join(tmpdir(), "modelgate-idle-"));
const upstream = await startBenchUpstream(dir);
try {
  const loadBefore = load();
  const samples: Sample[][] = bins.map(() => []);
  const floor = values.floor ? await buildFloor(dir) : undefined;
  const floorSamples: MemorySplit[] = [];
  for (let r = 0; r < rounds; r++) {
    for (const [i, bin] of bins.entries()) samples[i]?.push(await measureOnce(bin, dir, upstream.port));
    if (floor !== undefined) floorSamples.push(await measureFloor(floor, dir));
  }
  console.log(
    `idle memory of \`serve\`, ${settleMs} ms after listening; median of ${rounds} rounds, alternating; ${values.warm ? "page cache as it was" : "the executable's cached pages dropped before each start"}`,
  );
  console.log(`load average ${loadBefore} before, ${load()} after`);
  console.log(
    "| executable | RSS MB | executable file MB | of which code (r-x) | read-only data (r--) | data + bundle (rw-) | other files MB | anonymous MB | of which [heap] MB | RSS per round | first stream TTFB ms, per round | RSS after it MB |",
  );
  console.log("|---|---|---|---|---|---|---|---|---|---|---|---|");
  for (const [i, bin] of bins.entries()) {
    const s = samples[i] ?? [];
    const m = (key: keyof MemorySplit) => median(s.map((x) => x.idle[key])).toFixed(1);
    const each = s.map((x) => x.idle.rssMb.toFixed(1)).join(", ");
    const ttfb = `${median(s.map((x) => x.firstTtfbMs)).toFixed(1)} (${s.map((x) => x.firstTtfbMs.toFixed(1)).join(", ")})`;
    const after = median(s.map((x) => x.afterFirstMb)).toFixed(1);
    console.log(
      `| ${bin} | ${m("rssMb")} | ${m("executableMb")} | ${m("executableCodeMb")} | ${m("executableRodataMb")} | ${m("executableRwMb")} | ${m("otherFilesMb")} | ${m("anonymousMb")} | ${m("brkHeapMb")} | ${each} | ${ttfb} | ${after} |`,
    );
  }
  if (floorSamples.length > 0) {
    const m = (key: keyof MemorySplit) => median(floorSamples.map((x) => x[key])).toFixed(1);
    const each = floorSamples.map((x) => x.rssMb.toFixed(1)).join(", ");
    console.log(
      `| floor: a compiled bare Bun.serve | ${m("rssMb")} | ${m("executableMb")} | ${m("executableCodeMb")} | ${m("executableRodataMb")} | ${m("executableRwMb")} | ${m("otherFilesMb")} | ${m("anonymousMb")} | ${m("brkHeapMb")} | ${each} | – | – |`,
    );
  }
} finally {
  await upstream.proc.stop();
  rmSync(dir, { recursive: true, force: true });
}
