// Runs wrk (Debian's, pinned to the load core) in closed-loop or fixed-rate mode through
// bench/wrk.lua and parses its JSON summary.
import { join } from "node:path";
import * as v from "valibot";
import { LOAD_CORE, runBounded } from "./procs.ts";

const LUA = join(import.meta.dir, "wrk.lua");

const ResultSchema = v.object({
  requests: v.number(),
  duration_us: v.number(),
  errors: v.object({
    connect: v.number(),
    read: v.number(),
    write: v.number(),
    status: v.number(),
    timeout: v.number(),
  }),
  latency_us: v.object({
    mean: v.number(),
    p50: v.number(),
    p90: v.number(),
    p99: v.number(),
    p999: v.number(),
    max: v.number(),
  }),
});

export type WrkResult = v.InferOutput<typeof ResultSchema> & { rps: number; errorCount: number };

export interface WrkRequest {
  /** Full URL of the chat completions endpoint on the target. */
  url: string;
  headers: Record<string, string>;
  /** Path of a file holding the JSON body. */
  bodyFile: string;
}

export interface WrkRun {
  connections: number;
  seconds: number;
  /** Requests per second; 0 = closed loop (each connection sends as soon as it has its answer). */
  rate: number;
}

export async function wrk(request: WrkRequest, run: WrkRun): Promise<WrkResult> {
  const headers = Object.entries(request.headers)
    .map(([name, value]) => `${name}: ${value}`)
    .join("\n");
  const cmd = [
    "taskset",
    "-c",
    String(LOAD_CORE),
    "wrk",
    "-t1",
    `-c${run.connections}`,
    `-d${run.seconds}s`,
    "--timeout",
    "5s",
    "-s",
    LUA,
    request.url,
  ];
  const out = await runBounded(cmd, (run.seconds + 20) * 1000, {
    BENCH_BODY_FILE: request.bodyFile,
    BENCH_HEADERS: headers,
    BENCH_RATE: String(run.rate),
  });
  const line = out.stdout.split("\n").find((l) => l.startsWith("BENCH_RESULT "));
  if (out.code !== 0 || line === undefined) {
    throw new Error(`wrk failed (exit ${out.code}): ${out.stderr.slice(-1000)}${out.stdout.slice(-1000)}`);
  }
  const parsed = v.parse(ResultSchema, JSON.parse(line.slice("BENCH_RESULT ".length)));
  const e = parsed.errors;
  return {
    ...parsed,
    rps: parsed.requests / (parsed.duration_us / 1e6),
    errorCount: e.connect + e.read + e.write + e.status + e.timeout,
  };
}

/** Connections for a fixed rate: enough that the rate holds while p99 is at the 5 ms limit. */
export function connectionsFor(rate: number): number {
  return Math.min(512, Math.max(4, Math.ceil(rate / 200) + 2));
}
