// What a cluster worker pays to meter through its primary: admit + settle through the real
// RemoteMeter → Bun IPC → WorkerHost → LedgerMeter path, against the same LedgerMeter called in
// process; JSON or "advanced" serialization, messages batched per event-loop turn (as serve does)
// or sent one by one. Prints wall time and CPU (both processes) per admit + settle; the
// difference to the local meter is the IPC cost.
//
//   bun bench/ipc.ts [--requests N] [--concurrency C]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { nanos } from "../src/base/money.ts";
import { toKeyId } from "../src/base/types.ts";
import type { Meter, MeteredKey } from "../src/billing/contract.ts";
import { startBilling } from "../src/billing/start.ts";
import { findModel } from "../src/catalog/models.ts";
import { WorkerHost } from "../src/cluster/host.ts";
import { PrimaryLink } from "../src/cluster/link.ts";
import { batched } from "../src/cluster/protocol.ts";
import { RemoteMeter } from "../src/cluster/remote-meter.ts";
import { loadConfig } from "../src/config/load.ts";
import { openStore } from "../src/store/open.ts";

const WARMUP = 2000;
const model = findModel("modelx-5.5");
if (!model) throw new Error("modelx-5.5 is not in the catalog");

const cpuUs = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

/** admit + settle `count` times, `concurrency` at a time; wall and CPU of this process. */
async function loop(meter: Meter, key: MeteredKey, count: number, concurrency: number) {
  // Request ids are unique in the usage records: every run of the loop gets its own.
  const run = `${process.pid}_${performance.now().toFixed(3)}`;
  let next = 0;
  const lane = async () => {
    while (next < count) {
      next++;
      const admission = await meter.admit({
        requestId: `req_${run}_${next}`,
        principal: key,
        model: model as NonNullable<typeof model>,
        endpoint: "/v1/chat/completions",
        method: "POST",
        stream: false,
        clientAddress: "127.0.0.1",
        worstCase: { kind: "text", inputTokens: 30, maxOutputTokens: 64 },
      });
      await admission.settle({
        status: 200,
        usage: {
          inputTokens: 30,
          cachedInputTokens: 0,
          cacheWriteTokens: 0,
          cacheWrite1hTokens: 0,
          outputTokens: 40,
          reasoningTokens: 0,
          generations: 0,
        },
        source: "reported",
        channels: ["bench"],
      });
    }
  };
  const cpu = cpuUs();
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, lane));
  return { wallUs: (performance.now() - started) * 1000, cpuUs: cpuUs() - cpu };
}

/** One IPC write per turn (as serve does), or one per message. */
function sender<M>(send: (payload: M | M[]) => void, batch: boolean): (message: M) => void {
  return batch ? batched<M>((messages) => send(messages)) : (message) => send(message);
}

async function child(count: number, concurrency: number, key: MeteredKey, batch: boolean): Promise<void> {
  const link = new PrimaryLink(sender((payload) => void process.send?.(payload), batch));
  process.on("message", (message) => link.receive(message));
  const meter = new RemoteMeter(link);
  await loop(meter, key, WARMUP, concurrency);
  const timed = await loop(meter, key, count, concurrency);
  console.log(`IPC_RESULT ${JSON.stringify(timed)}`);
  process.exit(0);
}

async function primary(count: number, concurrency: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "modelgate-ipc-"));
  const config = loadConfig({ env: {}, flags: { db: `sqlite://${join(dir, "bench.db")}` } });
  const store = await openStore(config.store.url);
  const account = await store.createAccount("bench", nanos(1_000_000_000_000_000));
  const billing = await startBilling(config, store);
  const key: MeteredKey = {
    keyId: toKeyId("key_bench"),
    keyName: "bench",
    accountId: account.id,
    accountName: account.name,
    dailyCap: null,
    rpm: 1_000_000_000,
    concurrency: 100_000,
    group: "default",
    tpm: null,
    budgets: null,
    accountBudgets: null,
  };
  const rows: string[] = [];
  const row = (what: string, wallUs: number, cpu: number, primaryCpu: number | null) =>
    rows.push(
      `| ${what} | ${(wallUs / count).toFixed(1)} | ${(cpu / count).toFixed(1)} | ${primaryCpu === null ? "–" : (primaryCpu / count).toFixed(1)} |`,
    );

  await loop(billing.meter, key, WARMUP, concurrency);
  const local = await loop(billing.meter, key, count, concurrency);
  row("LedgerMeter in process", local.wallUs, local.cpuUs, null);

  const variants = [
    { serialization: "json", batch: true },
    { serialization: "json", batch: false },
    { serialization: "advanced", batch: true },
  ] as const;
  for (const { serialization, batch } of variants) {
    let host: WorkerHost | undefined;
    const args = ["--child", "--requests", String(count), "--concurrency", String(concurrency)];
    if (!batch) args.push("--unbatched");
    const sub = Bun.spawn([process.execPath, import.meta.path, ...args, "--key", JSON.stringify(key)], {
      stdio: ["ignore", "pipe", "inherit"],
      serialization,
      ipc: (message) => host?.receive(message),
    });
    host = new WorkerHost(
      1,
      sender((payload) => sub.send(payload), batch),
      billing,
    );
    const cpuBefore = cpuUs();
    const out = await new Response(sub.stdout).text();
    const primaryCpu = cpuUs() - cpuBefore;
    await sub.exited;
    const line = out.split("\n").find((l) => l.startsWith("IPC_RESULT "));
    if (!line) throw new Error(`the child printed no result: ${out}`);
    const timed = JSON.parse(line.slice("IPC_RESULT ".length)) as { wallUs: number; cpuUs: number };
    // The primary's CPU covers the warm-up too; scale it to the timed share.
    const primaryTimed = (primaryCpu * count) / (count + WARMUP);
    const how = `${serialization}, ${batch ? "batched per turn" : "one write per message"}`;
    row(`RemoteMeter over IPC, ${how}`, timed.wallUs, timed.cpuUs + primaryTimed, primaryTimed);
  }
  await billing.meter.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  console.log(
    [
      `admit + settle, ${count} times, ${concurrency} at a time (after ${WARMUP} warm-up); per admit + settle:`,
      "",
      "| meter | wall µs | CPU µs, both processes | of which primary |",
      "|---|---|---|---|",
      ...rows,
    ].join("\n"),
  );
}

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    child: { type: "boolean" },
    requests: { type: "string" },
    concurrency: { type: "string" },
    key: { type: "string" },
    unbatched: { type: "boolean" },
  },
  strict: true,
});
const count = Number(values.requests ?? 20_000);
const concurrency = Number(values.concurrency ?? 32);
if (values.child) {
  await child(count, concurrency, JSON.parse(values.key ?? "{}") as MeteredKey, !values.unbatched);
} else await primary(count, concurrency);
