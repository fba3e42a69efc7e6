// The store thread alone (src/billing/store-thread.ts): batches of journal lines sent as `serve`
// sends them (the bench's Chat usage record, one line each), a batch every D ms, on a SQLite file
// in a temporary folder; prints the store thread's CPU per record (its schedstat) per round of 10
// batches. Several --delay values alternate round by round at the same records per second, so the
// fixed cost of a commit (settlement row, journal sequence, the first write of each page, waking
// the thread) shows against the per-record cost. The process runs on the target core.
//
//   bun bench/store-thread.ts [--delay 100,250,500] [--per-second 1000] [--rounds 5]
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { nanos } from "../src/base/money.ts";
import { toKeyId, toModelId } from "../src/base/types.ts";
import { StoreThread } from "../src/billing/store-thread.ts";
import type { LogRange } from "../src/billing/writer.ts";
import { openStore } from "../src/store/open.ts";
import type { UsageRecord } from "../src/store/usage/record.ts";
import { loadAverage, pinSelf, TARGET_CORE } from "./procs.ts";
import { percentile } from "./stats.ts";

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    delay: { type: "string" },
    "per-second": { type: "string" },
    rounds: { type: "string" },
  },
  strict: true,
});
const delays = (values.delay ?? "100,250,500").split(",").map(Number);
const perSecond = Number(values["per-second"] ?? 1000);
const rounds = Number(values.rounds ?? 5);
if (delays.some((d) => !(d > 0)) || !(perSecond > 0) || !(rounds > 0))
  throw new Error("expected positive numbers");

pinSelf(TARGET_CORE);
const dir = mkdtempSync(join(tmpdir(), "modelgate-store-thread-"));
const url = `sqlite://${join(dir, "bench.db")}`;
const journalFile = join(dir, "usage.log");
const store = await openStore(url);
const account = await store.createAccount("bench", nanos(1_000_000_000_000_000));
await store.close();
const thread = await StoreThread.open(url);

/** The store thread's run time, ns (the one Worker of this process). */
function threadNs(): number {
  let ns = 0;
  for (const tid of readdirSync("/proc/self/task")) {
    if (readFileSync(`/proc/self/task/${tid}/comm`, "utf8").trim() !== "Worker") continue;
    ns += Number(readFileSync(`/proc/self/task/${tid}/schedstat`, "utf8").split(" ")[0]);
  }
  return ns;
}

let n = 0;
let seq = 0;
/** One batch as the writer sends it: the records' journal lines, numbered. */
function batch(size: number): { records: UsageRecord[]; lines: LogRange } {
  const records: UsageRecord[] = [];
  let lines = "";
  for (let i = 0; i < size; i++) {
    n++;
    const record: UsageRecord = {
      requestId: `req_${n.toString(16).padStart(24, "0")}`,
      clientRequestId: null,
      keyId: toKeyId("key_0cbfd95ce18c48d8"),
      accountId: account.id,
      model: toModelId("modelx-5.5"),
      endpoint: "/v1/chat/completions",
      stream: false,
      status: 200,
      inputTokens: 19,
      cachedInputTokens: 0,
      cacheWriteTokens: 0,
      cacheWrite1hTokens: 0,
      outputTokens: 18,
      reasoningTokens: 0,
      generations: 0,
      costNanos: nanos(23_750),
      usageSource: "reported",
      channels: ["bench-upstream"],
      latencyMs: 1,
      ttfbMs: 1,
      clientAddress: "127.0.0.1",
      endUser: null,
      detail: null,
      createdAt: Date.now(),
    };
    records.push(record);
    lines += `${++seq}\t${JSON.stringify(record)}\n`;
  }
  // The thread reads a batch's lines from the journal file, as when serving.
  writeFileSync(journalFile, lines);
  const range: LogRange = { path: journalFile, from: 0, to: Buffer.byteLength(lines) };
  return { records, lines: range };
}

const perRecord = new Map<number, number[]>(delays.map((d) => [d, []]));
try {
  // Warm-up: the thread's code compiled before anything is counted.
  for (let i = 0; i < 20; i++) {
    const { records, lines } = batch(100);
    await thread.commit(records, seq, lines, `warm-${i}`);
  }
  for (let round = 0; round < rounds; round++) {
    for (const delay of round % 2 === 0 ? delays : [...delays].reverse()) {
      const size = Math.max(1, Math.round((perSecond * delay) / 1000));
      const start = threadNs();
      for (let i = 0; i < 10; i++) {
        const { records, lines } = batch(size);
        await thread.commit(records, seq, lines, `b-${round}-${delay}-${i}`);
        await Bun.sleep(delay);
      }
      perRecord.get(delay)?.push((threadNs() - start) / 1000 / (10 * size));
    }
  }
  console.log(
    `Store thread CPU per record at ${perSecond} records/s, ${rounds} rounds of 10 batches, delays alternating; load ${loadAverage()}`,
  );
  console.log("| delay ms | records a commit | µs/record median (min–max) |");
  console.log("|---|---|---|");
  for (const [delay, xs] of perRecord) {
    const size = Math.max(1, Math.round((perSecond * delay) / 1000));
    console.log(
      `| ${delay} | ${size} | ${percentile(xs, 50).toFixed(1)} (${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)}) |`,
    );
  }
} finally {
  await thread.close();
  rmSync(dir, { recursive: true, force: true });
}
