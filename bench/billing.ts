// Billing benchmark (not a test): the cost of admission plus settlement per request, and the
// usage writer's throughput, against a real SQLite file in WAL mode.
//   ./node_modules/.bin/bun bench/billing.ts [--requests N] [--concurrency C] [--store-thread]
// Prints one JSON object: admit_settle_us_per_request (wall time / requests with C in flight, the
// CPU cost of the hot path including its share of batched commits), settle_latency_ms p50/p99
// (what a request waits for durability), writer_records_per_s (records committed per second with
// debits, through the group-commit writer).
// --store-thread instead runs the meter as `serve` does (usage journal), committing on the main
// thread and on the store thread in turn, 3 rounds each, and prints per round the main thread's
// CPU per request (its /proc schedstat), the process's (every thread, process.cpuUsage), and the
// event loop's stalls (p99 and max lateness of a 1 ms ticker) over the run and its final flush.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import * as v from "valibot";
import { nanos } from "../src/base/money.ts";
import { toKeyId, toModelId } from "../src/base/types.ts";
import { UsageFeed } from "../src/billing/feed.ts";
import { LedgerMeter } from "../src/billing/ledger.ts";
import { StoreThread } from "../src/billing/store-thread.ts";
import { GroupCommitWriter } from "../src/billing/writer.ts";
import { ModelAllowList } from "../src/catalog/groups.ts";
import { findModel } from "../src/catalog/models.ts";
import { BillingSchema } from "../src/config/prices.ts";
import { openStore } from "../src/store/open.ts";
import type { UsageRecord } from "../src/store/usage/record.ts";

const { values } = parseArgs({
  options: {
    requests: { type: "string" },
    concurrency: { type: "string" },
    "store-thread": { type: "boolean" },
  },
});
const REQUESTS = Number(values.requests ?? 50_000);
const CONCURRENCY = Number(values.concurrency ?? 256);

const dir = mkdtempSync(join(tmpdir(), "modelgate-bench-billing-"));
const dbUrl = `sqlite://${join(dir, "bench.db")}`;
const store = await openStore(dbUrl);
const account = await store.createAccount("bench", nanos(1_000_000_000_000_000));
const found = findModel("modelx-5.4-mini");
if (!found) throw new Error("catalog lacks modelx-5.4-mini");
const model = found;

/** The meter as a bench runs it: without a journal by default, or as `serve` runs it. */
async function benchMeter(options: { journalPath?: string; thread?: StoreThread | undefined } = {}) {
  const meter = new LedgerMeter({
    store,
    feed: new UsageFeed(),
    billing: v.parse(BillingSchema, {}),
    pollMs: 0,
    ...options,
  });
  await meter.start();
  const principal = {
    keyId: toKeyId("key_bench"),
    keyName: "bench",
    accountId: account.id,
    accountName: account.name,
    group: "default",
    models: new ModelAllowList(["*"]),
    dailyCap: nanos(1_000_000_000_000_000),
    rpm: null,
    concurrency: null,
    tpm: null,
    budgets: null,
    accountBudgets: null,
  };
  const latencies: number[] = [];
  let next = 0;
  const loop = async () => {
    while (next < REQUESTS) {
      const i = next++;
      const admission = await meter.admit({
        requestId: `bench_${options.journalPath ?? ""}${i}`,
        principal,
        model,
        endpoint: "/v1/chat/completions",
        method: "POST",
        stream: false,
        worstCase: { kind: "text", inputTokens: 200, maxOutputTokens: 1000 },
      });
      const t = performance.now();
      await admission.settle({
        status: 200,
        usage: {
          inputTokens: 200,
          cachedInputTokens: 50,
          cacheWriteTokens: 0,
          cacheWrite1hTokens: 0,
          outputTokens: 300,
          reasoningTokens: 0,
          generations: 0,
        },
        source: "reported",
        channels: ["sim"],
      });
      latencies.push(performance.now() - t);
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, loop));
  const elapsed = performance.now() - started;
  await meter.flush();
  await meter.close();
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => Number((latencies[Math.floor((latencies.length - 1) * p)] ?? 0).toFixed(3));
  return {
    admit_settle_us_per_request: Number(((elapsed * 1000) / REQUESTS).toFixed(2)),
    settle_latency_ms: { p50: pct(0.5), p99: pct(0.99) },
  };
}

async function benchWriter() {
  const writer = new GroupCommitWriter<UsageRecord>((batch) => store.usage.commit(batch), { windowMs: 1 });
  const record = (i: number): UsageRecord => ({
    requestId: `writer_${i}`,
    keyId: toKeyId("key_bench"),
    accountId: account.id,
    model: toModelId("modelx-5.4-mini"),
    endpoint: "/v1/responses",
    stream: true,
    status: 200,
    inputTokens: 200,
    cachedInputTokens: 0,
    cacheWriteTokens: 0,
    cacheWrite1hTokens: 0,
    outputTokens: 300,
    reasoningTokens: 0,
    generations: 0,
    costNanos: nanos(140_000),
    usageSource: "reported",
    channels: ["sim"],
    latencyMs: 12,
    ttfbMs: 3,
    clientAddress: "127.0.0.1",
    endUser: null,
    detail: null,
    createdAt: Date.now(),
  });
  const started = performance.now();
  const writes: Promise<unknown>[] = [];
  for (let i = 0; i < REQUESTS; i++) writes.push(writer.write(record(i)));
  await Promise.all(writes);
  const elapsed = performance.now() - started;
  await writer.close();
  return { writer_records_per_s: Math.round(REQUESTS / (elapsed / 1000)) };
}

/** CPU time of this process's main thread so far, in µs (/proc schedstat: ns on the CPU). */
function mainThreadCpuUs(): number {
  const text = readFileSync(`/proc/self/task/${process.pid}/schedstat`, "utf8");
  return Number(text.split(" ")[0]) / 1000;
}

/** One run of the journalled meter: main-thread and process CPU per request, event-loop stalls. */
async function benchJournalled(round: number, onThread: boolean) {
  const thread = onThread ? await StoreThread.open(dbUrl) : undefined;
  const lateness: number[] = [];
  let last = performance.now();
  const ticker = setInterval(() => {
    const now = performance.now();
    lateness.push(now - last - 1);
    last = now;
  }, 1);
  const main = mainThreadCpuUs();
  const all = process.cpuUsage();
  const result = await benchMeter({ journalPath: join(dir, `usage-${round}-${onThread}.log`), thread });
  const used = process.cpuUsage(all);
  const mainUs = mainThreadCpuUs() - main;
  clearInterval(ticker);
  lateness.sort((a, b) => a - b);
  const ms = (x: number | undefined) => Number((x ?? 0).toFixed(2));
  return {
    round,
    commits: onThread ? "store thread" : "main thread",
    main_thread_cpu_us_per_request: Number((mainUs / REQUESTS).toFixed(2)),
    process_cpu_us_per_request: Number(((used.user + used.system) / REQUESTS).toFixed(2)),
    loop_stall_ms: { p99: ms(lateness[Math.floor((lateness.length - 1) * 0.99)]), max: ms(lateness.at(-1)) },
    settle_latency_ms: result.settle_latency_ms,
  };
}

try {
  if (values["store-thread"]) {
    // Alternately, so the load of the shared machine falls on both alike.
    for (let round = 1; round <= 3; round++) {
      console.log(JSON.stringify(await benchJournalled(round, false)));
      console.log(JSON.stringify(await benchJournalled(round, true)));
    }
  } else {
    const meter = await benchMeter();
    const writer = await benchWriter();
    console.log(
      JSON.stringify({ requests: REQUESTS, concurrency: CONCURRENCY, ...meter, ...writer }, null, 2),
    );
  }
} finally {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}
