// Crash safety through the compiled binary: SIGKILL under streaming and non-stream load, restart,
// then every request whose client got a complete answer has exactly one usage record, and the
// balance equals the starting balance minus the sum of recorded costs (and the ledger agrees).
// Also with the store locked by another process at the kill, so the store thread holds batches
// it could not commit: the gateway answers meanwhile, and the restart replays them exactly once.
import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { type RunningGateway, startGateway, tempDir } from "../helpers/gateway.ts";
import { waitFor } from "../helpers/wait.ts";

const START_NANOS = 100_000_000_000; // bootstrap.balance_usd = 100
const CONFIG = `[bootstrap]\nbalance_usd = "100"\n[sim]\nseed = 3\n`;

const gateways: RunningGateway[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const gw of gateways) await gw.dispose();
  // Each store is given to two starts (the killed one and its restart): removed once both stopped.
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function one(url: string, key: string, stream: boolean, i: number): Promise<string | undefined> {
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({
      model: "modelx-5.4-mini",
      max_tokens: 40 + (i % 30),
      stream,
      messages: [{ role: "user", content: `request ${i}: write a short line sim:tps=2000` }],
    }),
  });
  const text = await response.text();
  if (response.status !== 200) return undefined;
  // Complete only when the client saw the end: the JSON body, or the stream's [DONE].
  if (stream && !text.includes("data: [DONE]")) return undefined;
  if (!stream && !text.includes('"choices"')) return undefined;
  return response.headers.get("x-request-id") ?? undefined;
}

/** Runs `clients` concurrent clients until `stop()`; the ids of requests whose client saw the end. */
function load(url: string, key: string, clients: number) {
  const completed: string[] = [];
  let stopped = false;
  const client = async (w: number) => {
    for (let i = w; !stopped; i += clients) {
      const id = await one(url, key, i % 2 === 0, i).catch(() => undefined);
      // One that finished while the kill was on its way is still complete.
      if (id) completed.push(id);
    }
  };
  const running = Array.from({ length: clients }, (_, w) => client(w));
  return {
    completed,
    async stop() {
      stopped = true;
      await Promise.all(running);
    },
  };
}

/**
 * After the restart: every completed request has exactly one record, the balance is the start
 * minus the recorded costs, the ledger agrees, and the restarted gateway loaded the same figures.
 */
async function expectExactlyOnce(second: RunningGateway, key: string, completed: string[]): Promise<void> {
  const db = new Database(join(second.dir, "modelgate.db"), { readonly: true });
  try {
    const count = db.query("SELECT count(*) AS n FROM usage_records WHERE request_id = ?");
    for (const id of completed) expect((count.get(id) as { n: number }).n).toBe(1);
    const records = db.query("SELECT count(*) AS n, sum(cost_nanos) AS c FROM usage_records").get() as {
      n: number;
      c: number;
    };
    expect(records.n).toBeGreaterThanOrEqual(completed.length);
    expect(records.c).toBeGreaterThan(0);
    const balance = (
      db.query("SELECT balance_nanos AS b FROM accounts WHERE name = 'default'").get() as { b: number }
    ).b;
    expect(balance).toBe(START_NANOS - records.c);
    const ledger = db.query("SELECT sum(amount_nanos) AS s FROM ledger").get() as { s: number };
    expect(ledger.s).toBe(balance);
    const debits = db.query("SELECT count(*) AS n FROM ledger WHERE kind = 'debit'").get() as { n: number };
    const paid = db.query("SELECT count(*) AS n FROM usage_records WHERE cost_nanos > 0").get() as {
      n: number;
    };
    expect(debits.n).toBe(paid.n);
  } finally {
    db.close();
  }
  // The restarted gateway loaded the same balance: its balance endpoint agrees with the store.
  const view = (await (
    await fetch(`${second.url}/v1/dashboard/billing/balance`, { headers: { authorization: `Bearer ${key}` } })
  ).json()) as { balance_nanos: number; reserved_nanos: number; spent_today_nanos: number };
  const db2 = new Database(join(second.dir, "modelgate.db"), { readonly: true });
  const stored = db2.query("SELECT balance_nanos AS b FROM accounts WHERE name = 'default'").get() as {
    b: number;
  };
  const spent = db2.query("SELECT sum(cost_nanos) AS c FROM usage_records").get() as { c: number };
  db2.close();
  expect(view.balance_nanos).toBe(stored.b);
  expect(view.reserved_nanos).toBe(0);
  expect(view.spent_today_nanos).toBe(spent.c);
}

/** A gateway on a fresh store with its bootstrap key, under load from `clients` clients. */
async function startUnderLoad(clients: number) {
  const dir = tempDir();
  dirs.push(dir);
  const first = await startGateway({ dir, config: CONFIG });
  gateways.push(first);
  const key = first.key;
  if (!key) throw new Error(`no bootstrap key:\n${first.logs()}`);
  return { dir, first, key, traffic: load(first.url, key, clients) };
}

/** Starts the killed gateway again on the same store. */
async function restart(dir: string): Promise<RunningGateway> {
  const second = await startGateway({ dir, config: CONFIG });
  gateways.push(second);
  return second;
}

test("kill -9 under load loses no completed request's record or debit and double-counts none", async () => {
  const { dir, first, key, traffic } = await startUnderLoad(16);
  // Killed under load, once more than the test's floor of requests have completed.
  await waitFor("requests to complete under load", () => traffic.completed.length > 20);
  first.proc.kill("SIGKILL");
  await traffic.stop();
  await first.proc.exited;
  expect(traffic.completed.length).toBeGreaterThan(20);
  const second = await restart(dir);
  await expectExactlyOnce(second, key, traffic.completed);
}, 60_000);

test("kill -9 while the store thread holds uncommitted batches: the restart replays each exactly once", async () => {
  const { dir, first, key, traffic } = await startUnderLoad(8);
  await waitFor("requests to complete before the lock", () => traffic.completed.length > 0);
  // Another process takes the store's write lock: the store thread's commits fail (locked),
  // their batches staying in the journal, while the gateway keeps answering.
  const locker = new Database(join(dir, "modelgate.db"));
  locker.run("PRAGMA busy_timeout = 10000");
  locker.run("BEGIN IMMEDIATE");
  const beforeLock = traffic.completed.length;
  await waitFor("answers while the store is locked", () => traffic.completed.length - beforeLock > 10);
  const duringLock = traffic.completed.slice(beforeLock);
  first.proc.kill("SIGKILL");
  await traffic.stop();
  await first.proc.exited;
  const count = locker.query("SELECT count(*) AS n FROM usage_records WHERE request_id = ?");
  const stored = duringLock.filter((id) => (count.get(id) as { n: number }).n > 0);
  locker.run("ROLLBACK");
  locker.close();
  // Answers went on while the store was locked, and none of them reached the store before the kill.
  expect(duringLock.length).toBeGreaterThan(10);
  expect(stored).toEqual([]);

  const second = await restart(dir);
  await expectExactlyOnce(second, key, traffic.completed);
}, 60_000);
