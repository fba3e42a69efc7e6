// What the Redis limiter costs per request: `bun bench/redis-limiter.ts [--runs 5] [--n 2000] [--c 32]`.
// Starts its own redis-server on a free port (no persistence; the shared one is never touched) and,
// per run, admits and releases N requests with one RedisLimiter, at concurrency 1 and at --c, and
// reports medians over the runs: Redis commands (round trips) per admission and per settlement, from
// the server's INFO commandstats; this process's CPU µs per acquire+release (process.cpuUsage); the
// server's CPU µs per acquire+release (INFO cpu); and wall µs per pair at concurrency 1. The
// in-memory limiter's CPU per pair is measured alongside for scale.
import { parseArgs } from "node:util";
import { RedisClient } from "bun";
import { nanos } from "../src/base/money.ts";
import { toAccountId, toKeyId } from "../src/base/types.ts";
import type { AcquireRequest, Limiter, Ticket } from "../src/limits/limiter.ts";
import { MemoryLimiter } from "../src/limits/memory.ts";
import { RedisLimiter } from "../src/limits/redis.ts";

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "5" },
    n: { type: "string", default: "2000" },
    c: { type: "string", default: "32" },
  },
});
const RUNS = Number(values.runs);
const N = Number(values.n);
const C = Number(values.c);

interface Sample {
  acquireCommands: number;
  releaseCommands: number;
  acquireInside: number;
  releaseInside: number;
  clientCpuUs: number;
  serverCpuUs: number;
  wallUs: number;
}

function request(i: number): AcquireRequest {
  // Ten keys of one account, limits that never refuse: every request runs the whole admission.
  return {
    keyId: toKeyId(`key_${i % 10}`),
    accountId: toAccountId(1),
    rpm: 1_000_000,
    concurrency: 1_000,
    dailyCap: nanos(1e15),
    reserve: nanos(1_000),
    now: Date.now(),
  };
}

/** Commands the server ran: those clients sent (round trips; scripts count once) and all of them. */
async function commands(admin: RedisClient): Promise<{ sent: number; all: number }> {
  const info = String(await admin.send("INFO", ["commandstats"]));
  let sent = 0;
  let all = 0;
  for (const match of info.matchAll(/^cmdstat_(\w+):calls=(\d+)/gm)) {
    const [, name = "", calls = "0"] = match;
    if (name === "info") continue;
    all += Number(calls);
    // What the limiter sends itself; everything else runs inside its scripts.
    if (name === "evalsha" || name === "eval" || name === "ping") sent += Number(calls);
  }
  return { sent, all };
}

async function serverCpuUs(admin: RedisClient): Promise<number> {
  const info = String(await admin.send("INFO", ["cpu"]));
  const user = Number(/used_cpu_user:([\d.]+)/.exec(info)?.[1] ?? 0);
  const sys = Number(/used_cpu_sys:([\d.]+)/.exec(info)?.[1] ?? 0);
  return (user + sys) * 1e6;
}

function cpuUs(): number {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
}

/** N acquire+release pairs, `concurrency` at a time. */
async function pairs(
  limiter: Limiter,
  concurrency: number,
): Promise<{ acquired: Ticket[]; acquireMs: number }> {
  const acquired: Ticket[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < N) {
        const result = await limiter.acquire(request(next++));
        if (!result.ok) throw new Error(`bench request refused: ${result.refusal}`);
        await limiter.release(result.ticket, nanos(500), Date.now());
        acquired.push(result.ticket);
      }
    }),
  );
  return { acquired, acquireMs: performance.now() - started };
}

async function redisRun(url: string, admin: RedisClient, concurrency: number): Promise<Sample> {
  const limiter = await RedisLimiter.connect({ url, prefix: `bench-${crypto.randomUUID()}` });
  await limiter.setBalance(toAccountId(1), nanos(1e15), 1);
  // Round trips: acquires alone, then releases alone, counted by the server.
  const c0 = await commands(admin);
  const held: Ticket[] = [];
  for (let i = 0; i < 200; i++) {
    const result = await limiter.acquire(request(i));
    if (result.ok) held.push(result.ticket);
  }
  const c1 = await commands(admin);
  for (const ticket of held) await limiter.release(ticket, nanos(500), Date.now());
  const c2 = await commands(admin);
  // CPU and wall: whole pairs.
  const s0 = await serverCpuUs(admin);
  const u0 = cpuUs();
  const { acquireMs } = await pairs(limiter, concurrency);
  const u1 = cpuUs();
  const s1 = await serverCpuUs(admin);
  await limiter.close();
  return {
    acquireCommands: (c1.sent - c0.sent) / held.length,
    releaseCommands: (c2.sent - c1.sent) / held.length,
    acquireInside: (c1.all - c1.sent - (c0.all - c0.sent)) / held.length,
    releaseInside: (c2.all - c2.sent - (c1.all - c1.sent)) / held.length,
    clientCpuUs: (u1 - u0) / N,
    serverCpuUs: (s1 - s0) / N,
    wallUs: (acquireMs * 1000) / N,
  };
}

async function memoryCpuUs(): Promise<number> {
  const limiter = new MemoryLimiter();
  await limiter.setBalance(toAccountId(1), nanos(1e15), 1);
  const u0 = cpuUs();
  await pairs(limiter, 1);
  return (cpuUs() - u0) / N;
}

function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

async function main(): Promise<void> {
  const server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = server.port;
  server.stop(true);
  const redis = Bun.spawn(
    ["redis-server", "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
    { stdout: "ignore", stderr: "ignore" },
  );
  const url = `redis://127.0.0.1:${port}`;
  const admin = new RedisClient(url);
  try {
    for (let i = 0; i < 100; i++) {
      const pong = await admin.send("PING", []).catch(() => undefined);
      if (pong === "PONG") break;
      await Bun.sleep(50);
    }
    await redisRun(url, admin, 1); // warm-up: JIT, scripts loaded into the server
    const rows: string[] = [];
    for (const concurrency of [1, C]) {
      const samples: Sample[] = [];
      for (let run = 0; run < RUNS; run++) samples.push(await redisRun(url, admin, concurrency));
      const pick = (field: keyof Sample) => median(samples.map((sample) => sample[field])).toFixed(1);
      rows.push(
        `| ${concurrency} | ${pick("acquireCommands")} (${pick("acquireInside")}) | ${pick("releaseCommands")} (${pick("releaseInside")}) | ${pick("clientCpuUs")} | ${pick("serverCpuUs")} | ${pick("wallUs")} |`,
      );
    }
    const memory: number[] = [];
    for (let run = 0; run < RUNS; run++) memory.push(await memoryCpuUs());
    console.log(
      `Redis limiter, ${N} acquire+release pairs per run, medians of ${RUNS} runs (${new Date().toISOString()})`,
    );
    console.log(
      "| concurrency | round trips per admission (commands inside) | per settlement (inside) | gateway CPU µs per pair | redis-server CPU µs per pair | elapsed µs per pair (wall / N) |",
    );
    console.log("|---|---|---|---|---|---|");
    for (const row of rows) console.log(row);
    console.log(`In-memory limiter for scale: ${median(memory).toFixed(2)} µs CPU per pair.`);
  } finally {
    admin.close();
    redis.kill("SIGKILL");
    await redis.exited;
  }
}

await main();
