// Billing benchmark (not a test): the cost of admission plus settlement per request, and the
// usage writer's throughput, against a real SQLite file in WAL mode.
//   ./node_modules/.bin/bun bench/billing.ts [--requests N] [--concurrency C]
// Prints one JSON object: admit_settle_us_per_request (wall time / requests with C in flight, the
// CPU cost of the hot path including its share of batched commits), settle_latency_ms p50/p99
// (what a request waits for durability), writer_records_per_s (records committed per second with
// debits, through the group-commit writer).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import * as v from "valibot";
import { nanos } from "../src/base/money.ts";
import { UsageFeed } from "../src/billing/feed.ts";
import { LedgerMeter } from "../src/billing/ledger-meter.ts";
import { GroupCommitWriter } from "../src/billing/writer.ts";
import { ModelAllowList } from "../src/catalog/groups.ts";
import { findModel } from "../src/catalog/models.ts";
import { BillingSchema } from "../src/config/prices.ts";
import { openStore } from "../src/store/open.ts";
import type { UsageRecord } from "../src/store/usage.ts";
import type { KeyId } from "../src/types.ts";

const { values } = parseArgs({
  options: { requests: { type: "string" }, concurrency: { type: "string" } },
});
const REQUESTS = Number(values.requests ?? 50_000);
const CONCURRENCY = Number(values.concurrency ?? 256);

const dir = mkdtempSync(join(tmpdir(), "modelgate-bench-billing-"));
const store = await openStore(`sqlite://${join(dir, "bench.db")}`);
const account = await store.createAccount("bench", nanos(1_000_000_000_000_000));
const found = findModel("modelx-5.4-mini");
if (!found) throw new Error("catalog lacks modelx-5.4-mini");
const model = found;

async function benchMeter() {
  const meter = new LedgerMeter({
    store,
    feed: new UsageFeed(),
    billing: v.parse(BillingSchema, {}),
    pollMs: 0,
  });
  await meter.start();
  const principal = {
    keyId: "key_bench" as KeyId,
    keyName: "bench",
    accountId: account.id,
    accountName: account.name,
    group: "default",
    models: new ModelAllowList(["*"]),
    dailyCap: nanos(1_000_000_000_000_000),
    rpm: null,
    concurrency: null,
  };
  const latencies: number[] = [];
  let next = 0;
  const loop = async () => {
    while (next < REQUESTS) {
      const i = next++;
      const admission = await meter.admit({
        requestId: `bench_${i}`,
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
    keyId: "key_bench",
    accountId: account.id,
    model: "modelx-5.4-mini",
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
  const writes: Promise<void>[] = [];
  for (let i = 0; i < REQUESTS; i++) writes.push(writer.write(record(i)));
  await Promise.all(writes);
  const elapsed = performance.now() - started;
  await writer.close();
  return { writer_records_per_s: Math.round(REQUESTS / (elapsed / 1000)) };
}

try {
  const meter = await benchMeter();
  const writer = await benchWriter();
  console.log(JSON.stringify({ requests: REQUESTS, concurrency: CONCURRENCY, ...meter, ...writer }, null, 2));
} finally {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}
