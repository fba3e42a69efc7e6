// After `kill -9` the CLI readers see every durable record (issue 17, defect 8): `modelgate usage`
// and `accounts list` count the records still only in the usage journal without a restart, and
// the next serve start stores none of them twice.
import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { appendFileSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { chat as chatTo } from "../helpers/chat-rig.ts";
import { type RunningGateway, startGateway, tempDir } from "../helpers/gateway.ts";
import { waitFor } from "../helpers/wait.ts";

const CONFIG = `[bootstrap]\nbalance_usd = "100"\n[sim]\nseed = 5\n`;
const gateways: RunningGateway[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const gw of gateways) await gw.dispose();
  // Both starts share one folder (given by the test, so dispose leaves it): removed here.
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function chat(url: string, key: string, i: number): Promise<boolean> {
  const response = await chatTo({ url }, key, { prompt: `line ${i} sim:tps=5000` });
  return response.status === 200 && (await response.text()).includes('"choices"');
}

const PENDING = 3;

/** Appends PENDING settled records after the journal's last number, as a crash leaves them. */
function appendPending(dir: string): void {
  const db = new Database(join(dir, "modelgate.db"), { readonly: true });
  const seq =
    (
      db.query("SELECT value FROM store_meta WHERE name = 'usage_journal_seq'").get() as {
        value: number;
      } | null
    )?.value ?? 0;
  const key = db.query("SELECT id, account_id FROM api_keys LIMIT 1").get() as {
    id: string;
    account_id: number;
  };
  db.close();
  const journal = join(dir, "modelgate.db-usage.log");
  const written = readFileSync(journal, "utf8")
    .split("\n")
    .filter((line) => /^\d+\t/.test(line));
  const last = Math.max(seq, Number(written.at(-1)?.split("\t")[0] ?? 0));
  const lines = Array.from({ length: PENDING }, (_, i) => {
    const record = {
      requestId: `req_pending_${i}`,
      keyId: key.id,
      accountId: key.account_id,
      model: "modelx-5.4-mini",
      endpoint: "/v1/chat/completions",
      stream: false,
      status: 200,
      inputTokens: 10,
      cachedInputTokens: 0,
      outputTokens: 5,
      reasoningTokens: 0,
      generations: 0,
      costNanos: 1_000_000,
      usageSource: "reported",
      channels: ["simulator"],
      latencyMs: 1,
      ttfbMs: null,
      clientAddress: null,
      endUser: null,
      detail: null,
      createdAt: Date.now(),
    };
    return `${last + 1 + i}\t${JSON.stringify(record)}\n`;
  });
  appendFileSync(journal, lines.join(""));
}

test("kill -9: usage and balances from the CLI include journaled records, stored once", async () => {
  const dir = tempDir();
  dirs.push(dir);
  const gw = await startGateway({ dir, config: CONFIG });
  gateways.push(gw);
  const key = gw.key ?? "";
  let completed = 0;
  let stop = false;
  const worker = async (w: number) => {
    for (let i = w; !stop; i += 8) if (await chat(gw.url, key, i).catch(() => false)) completed++;
  };
  const workers = Array.from({ length: 8 }, (_, w) => worker(w));
  // Killed under load, once more than the test's floor of requests have completed.
  await waitFor("requests to complete under load", () => completed > 10);
  gw.proc.kill("SIGKILL");
  stop = true;
  await Promise.all(workers);
  await gw.proc.exited;
  expect(completed).toBeGreaterThan(10);
  // Whether the killed server had records only in its journal depends on timing; make sure it
  // did: records settled after the store's last journal number, as a crash leaves them.
  appendPending(dir);

  const usage = await gw.cli(["usage", "--json"]);
  expect(usage.code).toBe(0);
  const replayed = Number(/stored (\d+) usage records/.exec(usage.stderr)?.[1] ?? 0);
  expect(replayed).toBeGreaterThanOrEqual(PENDING);
  const [totals] = JSON.parse(usage.stdout) as { requests: number; cost_nanos: number }[];
  expect(totals?.requests ?? 0).toBeGreaterThanOrEqual(completed + PENDING);
  const accounts = JSON.parse((await gw.cli(["accounts", "list", "--json"])).stdout) as {
    name: string;
    balance_nanos?: number;
    balance_usd: string;
  }[];
  const balance = accounts.find((a) => a.name === "default")?.balance_usd;
  expect(Number(balance)).toBeCloseTo(100 - (totals?.cost_nanos ?? 0) / 1e9, 9);

  const db = new Database(join(dir, "modelgate.db"), { readonly: true });
  const stored = (db.query("SELECT count(*) AS n FROM usage_records").get() as { n: number }).n;
  db.close();
  expect(stored).toBe(totals?.requests ?? -1);
  // The restarted server finds nothing left to replay: no record twice.
  const again = await startGateway({ dir, config: CONFIG });
  gateways.push(again);
  await again.stop();
  const db2 = new Database(join(dir, "modelgate.db"), { readonly: true });
  expect((db2.query("SELECT count(*) AS n FROM usage_records").get() as { n: number }).n).toBe(stored);
  db2.close();
}, 60_000);
