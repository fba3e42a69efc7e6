// Admission benchmark (not a test): the CPU one admission and its release cost in this process,
// with today's limits (RPM, concurrency, balance, daily cap) against the same plus tokens per
// minute (key and account) and two budgets (weekly and monthly), side by side in one run,
// interleaved round by round, on the in-memory limiter and on Redis (local, its own prefix).
//   ./node_modules/.bin/bun bench/admission.ts [--requests N] [--rounds R] [--redis URL]
// Prints one JSON object: per engine and variant, the median over rounds of CPU µs per
// acquire + release (process.cpuUsage: this process only; Redis's own work is not counted).
import { parseArgs } from "node:util";
import { RedisClient } from "bun";
import { nanos } from "../src/base/money.ts";
import { toAccountId, toKeyId } from "../src/base/types.ts";
import type { AcquireRequest, Limiter } from "../src/limits/limiter.ts";
import { MemoryLimiter } from "../src/limits/memory.ts";
import { RedisLimiter } from "../src/limits/redis.ts";

const { values } = parseArgs({
  options: {
    requests: { type: "string" },
    rounds: { type: "string" },
    redis: { type: "string" },
  },
});
const REQUESTS = Number(values.requests ?? 20_000);
const ROUNDS = Number(values.rounds ?? 5);
const REDIS = values.redis ?? "redis://127.0.0.1:6379";

const base: AcquireRequest = {
  keyId: toKeyId("key_bench"),
  accountId: toAccountId(1),
  rpm: 1_000_000_000,
  concurrency: 1_000_000,
  dailyCap: nanos(1_000_000_000_000_000),
  reserve: nanos(1_000),
  now: 0,
};
const withNew: AcquireRequest = {
  ...base,
  tpm: 1_000_000_000_000,
  accountTpm: 1_000_000_000_000,
  tokens: 1_200,
  budgets: [
    { name: "k:key_bench:weekly", period: "weekly", limit: nanos(1_000_000_000_000_000) },
    { name: "a:monthly", period: "monthly", limit: nanos(1_000_000_000_000_000) },
  ],
  seedBudget: async () => nanos(0),
};

/** CPU µs per acquire + release, `count` of them one after another. */
async function run(limiter: Limiter, request: AcquireRequest, count: number): Promise<number> {
  const before = process.cpuUsage();
  for (let i = 0; i < count; i++) {
    const result = await limiter.acquire({ ...request, now: Date.now() });
    if (!result.ok) throw new Error(`refused: ${result.refusal}`);
    await limiter.release(result.ticket, nanos(500), Date.now(), undefined, 500);
  }
  const used = process.cpuUsage(before);
  return (used.user + used.system) / count;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

async function engine(make: () => Promise<Limiter>, count: number) {
  const limiter = await make();
  await limiter.setBalance(toAccountId(1), nanos(1_000_000_000_000_000), 1);
  await run(limiter, base, Math.min(count, 1_000)); // warm up both paths
  await run(limiter, withNew, Math.min(count, 1_000));
  const off: number[] = [];
  const on: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    off.push(await run(limiter, base, count));
    on.push(await run(limiter, withNew, count));
  }
  await limiter.close?.();
  const fix = (n: number) => Number(n.toFixed(2));
  return {
    today_cpu_us: fix(median(off)),
    tpm_and_two_budgets_cpu_us: fix(median(on)),
    added_cpu_us: fix(median(on) - median(off)),
  };
}

const prefix = `mgbench-${crypto.randomUUID()}`;
const memory = await engine(async () => new MemoryLimiter(), REQUESTS);
const redis = await engine(
  () => RedisLimiter.connect({ url: REDIS, prefix, clock: "redis" }),
  Math.max(1, Math.floor(REQUESTS / 10)),
);
// Leave nothing behind in the shared Redis.
const client = new RedisClient(REDIS);
let cursor = "0";
do {
  const [next, keys] = (await client.send("SCAN", [cursor, "MATCH", `${prefix}:*`, "COUNT", "1000"])) as [
    string,
    string[],
  ];
  cursor = next;
  if (keys.length > 0) await client.send("DEL", keys);
} while (cursor !== "0");
client.close();
console.log(JSON.stringify({ requests: REQUESTS, rounds: ROUNDS, memory, redis }, null, 2));
