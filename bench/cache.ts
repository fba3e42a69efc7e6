// The response cache's cost and gain, side by side in one run: one modelgate with `[cache]` on for
// the bench key's group, pinned to the target core, asked at concurrency 1 for answers it has
// stored (hits: no upstream call) and for answers it has not (misses: the upstream's answer, then
// stored), in interleaved rounds, beside the same modelgate with no cache and the bench upstream
// alone (for the added latency of the paths that call it).
// Reports p50/p99 per kind and the gateway's CPU per request (µs).
//
//   ./node_modules/.bin/bun bench/cache.ts --bin PATH [--requests 400] [--rounds 3]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { cpuSecondsPrecise, LOAD_CORE, loadAverage, pinSelf, TARGET_CORE } from "./procs.ts";
import { percentile } from "./stats.ts";
import { CHAT_PATH, MODEL, modelgateContext, startBenchUpstream, startModelgateServer } from "./targets.ts";

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: { bin: { type: "string" }, requests: { type: "string" }, rounds: { type: "string" } },
  strict: true,
});
const bin = values.bin;
if (bin === undefined) throw new Error("--bin: give a modelgate executable (npm run build)");
const requests = Number(values.requests ?? 400);
const rounds = Number(values.rounds ?? 3);

const body = (content: string) =>
  JSON.stringify({ model: MODEL, messages: [{ role: "user", content }], max_tokens: 64 });

/** Sends `bodies` one after another; the latency of each in µs, and the target's CPU µs per request. */
async function serial(url: string, headers: Record<string, string>, bodies: string[], pid: number) {
  const latencies: number[] = [];
  const cpuBefore = cpuSecondsPrecise(pid);
  for (const text of bodies) {
    const started = performance.now();
    const response = await fetch(url, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: text,
    });
    await response.arrayBuffer();
    latencies.push((performance.now() - started) * 1000);
    if (response.status !== 200) throw new Error(`answered ${response.status}`);
  }
  const cpuUs = ((cpuSecondsPrecise(pid) - cpuBefore) * 1e6) / bodies.length;
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), cpuUs };
}

pinSelf(LOAD_CORE);
const dir = mkdtempSync(join(tmpdir(), "modelgate-cache-bench-"));
const upstream = await startBenchUpstream(dir);
const ctx = modelgateContext(dir, upstream, bin);
const server = await startModelgateServer(ctx, {
  label: "modelgate-cache",
  workers: 1,
  core: TARGET_CORE,
  extraConfig: "\n[cache.groups.bench]\nttl_seconds = 3600\n",
});
const plain = await startModelgateServer(ctx, { label: "modelgate-plain", workers: 1, core: TARGET_CORE });
type Row = { p50: number; p99: number; cpuUs: number };
const rows: Record<"direct" | "off" | "hit" | "miss", Row[]> = { direct: [], off: [], hit: [], miss: [] };
const load = loadAverage();
try {
  const url = server.base + CHAT_PATH;
  const direct = `http://127.0.0.1:${upstream.port}${CHAT_PATH}`;
  // The stored answer every hit finds, and a warm-up of both paths.
  const stored = body("the cached question");
  await serial(url, server.headers, [stored], server.proc.pid);
  await serial(
    url,
    server.headers,
    Array.from({ length: 100 }, (_, i) => body(`warm ${i}`)),
    server.proc.pid,
  );
  await serial(url, server.headers, Array(100).fill(stored), server.proc.pid);
  let fresh = 0;
  for (let round = 1; round <= rounds; round++) {
    const misses = Array.from({ length: requests }, () => body(`question ${round}-${fresh++}`));
    rows.direct.push(await serial(direct, {}, misses, upstream.proc.pid));
    rows.off.push(await serial(plain.base + CHAT_PATH, plain.headers, misses, plain.proc.pid));
    rows.miss.push(
      await serial(
        url,
        server.headers,
        misses.map((b) => b.replace("question", "asked")),
        server.proc.pid,
      ),
    );
    rows.hit.push(await serial(url, server.headers, Array(requests).fill(stored), server.proc.pid));
    console.error(
      `round ${round}: ${JSON.stringify({ direct: rows.direct.at(-1), miss: rows.miss.at(-1), hit: rows.hit.at(-1) })}`,
    );
  }
} finally {
  await server.proc.stop();
  await plain.proc.stop();
  await upstream.proc.stop();
  rmSync(dir, { recursive: true, force: true });
}

const median = (xs: number[]) => percentile(xs, 50);
const us = (n: number) => n.toFixed(0);
const directP50 = median(rows.direct.map((r) => r.p50));
console.log(`c=1, ${requests} requests × ${rounds} interleaved rounds (medians of the rounds), load ${load}`);
console.log("| answer | p50 µs | p99 µs | added p50 µs (minus upstream alone) | gateway CPU µs/request |");
console.log("|---|---|---|---|---|");
console.log(`| upstream alone | ${us(directP50)} | ${us(median(rows.direct.map((r) => r.p99)))} | – | – |`);
const LABEL = { off: "cache off", miss: "miss (cache on)", hit: "hit" } as const;
for (const kind of ["off", "miss", "hit"] as const) {
  const p50 = median(rows[kind].map((r) => r.p50));
  const added = kind === "hit" ? p50 : p50 - directP50;
  const note = kind === "hit" ? " (no upstream: all of it)" : "";
  console.log(
    `| ${LABEL[kind]} | ${us(p50)} | ${us(median(rows[kind].map((r) => r.p99)))} | ${us(added)}${note} | ${median(rows[kind].map((r) => r.cpuUs)).toFixed(1)} |`,
  );
}
