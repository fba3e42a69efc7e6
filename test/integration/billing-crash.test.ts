// Crash safety through the compiled binary: SIGKILL under streaming and non-stream load, restart,
// then every request whose client got a complete answer has exactly one usage record, and the
// balance equals the starting balance minus the sum of recorded costs (and the ledger agrees).
import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { join } from "node:path";
import { type RunningGateway, startGateway, tempDir } from "../helpers/gateway.ts";

const START_NANOS = 100_000_000_000; // bootstrap.balance_usd = 100
const CONFIG = `[bootstrap]\nbalance_usd = "100"\n[sim]\nseed = 3\n`;

let gateways: RunningGateway[] = [];
afterAll(async () => {
  for (const gw of gateways) await gw.dispose();
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

test("kill -9 under load loses no completed request's record or debit and double-counts none", async () => {
  const dir = tempDir();
  const first = await startGateway({ dir, config: CONFIG });
  gateways.push(first);
  const key = first.key;
  if (!key) throw new Error(`no bootstrap key:\n${first.logs()}`);
  const completed: string[] = [];
  let stop = false;
  const worker = async (w: number) => {
    for (let i = w; !stop; i += 16) {
      const id = await one(first.url, key, i % 2 === 0, i).catch(() => undefined);
      if (id && !stop) completed.push(id);
      else if (id) completed.push(id); // finished while the kill was on its way: still complete
    }
  };
  const workers = Array.from({ length: 16 }, (_, w) => worker(w));
  await Bun.sleep(1500);
  first.proc.kill("SIGKILL");
  stop = true;
  await Promise.all(workers);
  await first.proc.exited;
  expect(completed.length).toBeGreaterThan(20);

  const second = await startGateway({ dir, config: CONFIG });
  gateways = [first, second];
  const db = new Database(join(dir, "modelgate.db"), { readonly: true });
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
  const db2 = new Database(join(dir, "modelgate.db"), { readonly: true });
  const stored = db2.query("SELECT balance_nanos AS b FROM accounts WHERE name = 'default'").get() as {
    b: number;
  };
  const spent = db2.query("SELECT sum(cost_nanos) AS c FROM usage_records").get() as { c: number };
  db2.close();
  expect(view.balance_nanos).toBe(stored.b);
  expect(view.reserved_nanos).toBe(0);
  expect(view.spent_today_nanos).toBe(spent.c);
}, 60_000);
