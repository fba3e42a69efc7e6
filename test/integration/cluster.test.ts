// `serve --workers 2` through the compiled binary: two worker processes answer on one port, and
// the limits stay exact across them because the primary decides every admission — RPM,
// concurrency counted at the upstream, balance and credits, the admin feed from both workers, a
// worker killed mid-stream (its reservation and slot come back, it restarts), and a SIGTERM with
// requests in flight (every success has its record, the balance is the start minus their cost).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { formatUsd } from "../../src/base/money.ts";
import { type SimServer, startSimServer } from "../../src/sim/server.ts";
import { chat as chatTo } from "../helpers/chat-rig.ts";
import { startCountingProxy, type UpstreamCounts } from "../helpers/counting-proxy.ts";
import {
  adminTokenIn,
  balanceOf as balanceFor,
  createKey,
  errorCode,
  type RunningGateway,
  runCli,
  startGateway,
  tempDir,
} from "../helpers/gateway.ts";
import { keyAcceptedByWorkers, waitFor } from "../helpers/wait.ts";

let sim: SimServer;
let proxy: ReturnType<typeof Bun.serve>;
let gw: RunningGateway;
let adminToken: string;
let upstream: UpstreamCounts;

beforeAll(async () => {
  sim = startSimServer({ hostname: "127.0.0.1", port: 0, seed: 9 });
  const counting = startCountingProxy(sim.url);
  proxy = counting.server;
  upstream = counting.counts;
  gw = await startGateway({
    args: ["--workers", "2"],
    config: `[metrics]\noverhead_header = true\n[bootstrap]\nbalance_usd = "100"\n[[channels]]\nkind = "openai-chat"\nname = "sim-chat"\nbase_url = "http://127.0.0.1:${proxy.port}/v1"\napi_key_env = "SIM_UPSTREAM_KEY"\nmodels = ["modelx-*"]\n`,
    env: { SIM_UPSTREAM_KEY: "sk-upstream" },
  });
  adminToken = adminTokenIn(gw.logs()) ?? "";
});

afterAll(async () => {
  await gw.dispose();
  proxy.stop(true);
  await sim.stop();
});

const newKey = (args: string[]) => createKey(gw, args);

/**
 * One request on a new connection: the kernel spreads connections, not requests, over the workers,
 * and a pooled connection would keep every request on the worker it first reached.
 */
const chat = (secret: string, prompt: string, stream = false) =>
  chatTo(gw, secret, { prompt, stream, maxTokens: 50, keepalive: false });

/** `x-modelgate-worker`: the worker's number and pid (sent beside the overhead header). */
function workerOf(response: Response): string {
  const worker = response.headers.get("x-modelgate-worker");
  if (worker === null) throw new Error(`no x-modelgate-worker header (status ${response.status})`);
  return worker;
}

const balanceOf = (secret: string) => balanceFor(gw, secret);

function admin(path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${gw.url}/admin/v1${path}`, {
    ...init,
    headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
  });
}

/** Each worker has its own key cache (reloaded every 250 ms): a new key is used once both accept it. */
const keySeen = (secret: string) => keyAcceptedByWorkers(gw.url, secret, 2);

const SLOW = "count to five sim:ttft=800";

/** The worst case the gateway reserves for SLOW: read from the balance endpoint while one is in flight. */
async function worstCaseNanos(secret: string): Promise<number> {
  const pending = chat(secret, SLOW);
  const reserved = await waitFor("the reservation", async () => {
    const value = Number((await balanceOf(secret)).reserved_today_nanos);
    return value > 0 ? value : undefined;
  });
  await (await pending).text();
  return reserved;
}

describe("serve --workers 2", () => {
  test("two worker processes, neither of them the primary, answer on the one port", async () => {
    const key = gw.key ?? "";
    const seen = new Set<string>();
    for (let round = 0; round < 20 && seen.size < 2; round++) {
      const answers = await Promise.all(
        Array.from({ length: 16 }, () =>
          fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key}` }, keepalive: false }),
        ),
      );
      for (const answer of answers) {
        expect(answer.status).toBe(200);
        seen.add(workerOf(answer));
      }
    }
    const workers = [...seen].map((w) => w.split(" ").map(Number)).sort();
    expect(workers.map(([index]) => index)).toEqual([1, 2]);
    const pids = workers.map(([, pid]) => pid);
    expect(new Set(pids).size).toBe(2);
    expect(pids).not.toContain(gw.proc.pid);
  });

  test("rpm 10 and 50 concurrent requests across both workers: exactly 10 pass, 40 get the 429", async () => {
    const { secret } = await newKey(["--account", "default", "--rpm", "10", "--name", "rpm10"]);
    await keySeen(secret);
    const responses = await Promise.all(Array.from({ length: 50 }, () => chat(secret, "hello")));
    expect(new Set(responses.map(workerOf)).size).toBe(2);
    const ok = responses.filter((r) => r.status === 200);
    const refused = responses.filter((r) => r.status === 429);
    expect(ok.length).toBe(10);
    expect(refused.length).toBe(40);
    for (const r of refused) {
      expect(await errorCode(r)).toBe("rate_limit_exceeded");
      expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(Number(r.headers.get("retry-after-ms"))).toBeGreaterThan(0);
      expect(r.headers.get("x-ratelimit-limit-requests")).toBe("10");
      expect(r.headers.get("x-ratelimit-remaining-requests")).toBe("0");
    }
    const remaining = ok.map((r) => Number(r.headers.get("x-ratelimit-remaining-requests"))).sort();
    expect(remaining).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    for (const r of ok) await r.text();
  });

  test("a balance that fits exactly 10 worst cases: 10 of 50 concurrent requests pass, 40 insufficient_quota", async () => {
    const probe = await newKey(["--account", "default", "--name", "probe"]);
    await keySeen(probe.secret);
    const worst = await worstCaseNanos(probe.secret);
    expect((await gw.cli(["accounts", "create", "poor", "--balance", formatUsd(10 * worst)])).code).toBe(0);
    const { secret } = await newKey(["--account", "poor", "--name", "poor"]);
    await keySeen(secret);
    const responses = await Promise.all(Array.from({ length: 50 }, () => chat(secret, SLOW)));
    expect(new Set(responses.map(workerOf)).size).toBe(2);
    expect(responses.filter((r) => r.status === 200).length).toBe(10);
    const refused = responses.filter((r) => r.status === 429);
    expect(refused.length).toBe(40);
    for (const r of refused) {
      expect(await errorCode(r)).toBe("insufficient_quota");
      expect(r.headers.get("x-should-retry")).toBe("false");
    }
    const view = await balanceOf(secret);
    expect(Number(view.balance_nanos)).toBeGreaterThanOrEqual(0);
    expect(view.reserved_nanos).toBe(0);
  }, 20_000);

  test("concurrency 3 with 20 slow streams across both workers: at most 3 open upstream, 17 refused", async () => {
    const { secret } = await newKey(["--account", "default", "--concurrency", "3", "--name", "conc3"]);
    await keySeen(secret);
    const before = upstream.opened;
    upstream.peak = upstream.open;
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => chat(secret, "stream please sim:ttft=800", true)),
    );
    expect(new Set(responses.map(workerOf)).size).toBe(2);
    const ok = responses.filter((r) => r.status === 200);
    const refused = responses.filter((r) => r.status === 429);
    expect(ok.length).toBe(3);
    expect(refused.length).toBe(17);
    for (const r of refused) expect(await errorCode(r)).toBe("concurrency_limit_exceeded");
    for (const r of ok) expect(await r.text()).toContain("data: [DONE]");
    expect(upstream.opened - before).toBe(3);
    expect(upstream.peak).toBeLessThanOrEqual(3);
  }, 20_000);

  test("a credit through the admin API reaches the primary's meter; the admin feed shows both workers' requests", async () => {
    expect((await gw.cli(["accounts", "create", "empty", "--balance", "0"])).code).toBe(0);
    const { secret } = await newKey(["--account", "empty", "--name", "empty"]);
    await keySeen(secret);
    const refused = await chat(secret, "hello");
    expect(refused.status).toBe(429);
    expect(await errorCode(refused)).toBe("insufficient_quota");
    const credit = await admin("/accounts/empty/credit", {
      method: "POST",
      body: JSON.stringify({ amount_usd: "1", note: "cluster test" }),
    });
    expect(credit.status).toBe(200);
    // The primary's balance sync polls the store revision every 250 ms.
    const first = await waitFor("the credit to be usable", async () => {
      const response = await chat(secret, "hello");
      if (response.status === 200) return response;
      await response.text();
      return undefined;
    });
    await first.text();

    const feed = await admin("/events");
    expect(feed.status).toBe(200);
    const reader = (feed.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = "";
    while (!text.includes("event: ready")) text += decoder.decode((await reader.read()).value);
    const answers = await Promise.all(Array.from({ length: 16 }, () => chat(secret, "hello")));
    expect(new Set(answers.map(workerOf)).size).toBe(2);
    const ids = answers.map((r) => r.headers.get("x-request-id"));
    for (const r of answers) expect(r.status).toBe(200);
    await Promise.all(answers.map((r) => r.text()));
    while (!ids.every((id) => text.includes(`"request_id":"${id}"`))) {
      text += decoder.decode((await reader.read()).value);
    }
    await reader.cancel();
  }, 20_000);

  test("SIGKILL of a worker mid-stream releases its reservation and slot with no charge, and the worker comes back", async () => {
    expect((await gw.cli(["accounts", "create", "victim", "--balance", "1"])).code).toBe(0);
    const { secret, id } = await newKey(["--account", "victim", "--concurrency", "1", "--name", "victim"]);
    await keySeen(secret);
    const held = await chat(secret, "hold sim:ttft=30000", true);
    expect(held.status).toBe(200);
    const [index, pid] = workerOf(held).split(" ").map(Number) as [number, number];
    const during = await balanceOf(secret);
    expect(during.in_flight).toBe(1);
    expect(Number(during.reserved_nanos)).toBeGreaterThan(0);
    const second = await chat(secret, "hello");
    expect(second.status).toBe(429);
    expect(await errorCode(second)).toBe("concurrency_limit_exceeded");

    process.kill(pid, "SIGKILL");
    await held.text().catch(() => "connection closed");
    const exitLine = new RegExp(
      `"msg":"worker exited unexpectedly; restarting it","worker":${index},"pid":${pid},"how":"SIGKILL","released_requests":1`,
    );
    await waitFor("the primary to release the dead worker's request", async () =>
      exitLine.test(gw.logs()) ? true : undefined,
    );
    const after = await balanceOf(secret);
    expect(after.in_flight).toBe(0);
    expect(after.reserved_nanos).toBe(0);
    expect(after.balance_nanos).toBe(1_000_000_000);
    const next = await chat(secret, "hello");
    expect(next.status).toBe(200);
    await next.text();

    const back = new RegExp(`"msg":"worker listening","worker":${index},"pid":(\\d+)`, "g");
    const newPid = await waitFor("the worker to restart", async () => {
      const pids = [...gw.logs().matchAll(back)].map((m) => Number(m[1])).filter((p) => p !== pid);
      return pids[0];
    });
    await waitFor("the restarted worker to answer", async () => {
      const answers = await Promise.all(
        Array.from({ length: 8 }, () =>
          fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${secret}` }, keepalive: false }),
        ),
      );
      return answers.some((a) => workerOf(a) === `${index} ${newPid}`) ? true : undefined;
    });

    const records = (await (await admin(`/requests?key=${id}`)).json()) as {
      data: { status: number; cost_nanos: number }[];
    };
    const byStatus = records.data.map((r) => [r.status, r.cost_nanos > 0]).sort();
    expect(byStatus).toEqual([
      [200, true],
      [500, false],
    ]);
  }, 30_000);

  test("SIGTERM with requests in flight: every success has its usage record and the balance is the start minus their cost", async () => {
    expect((await gw.cli(["accounts", "create", "ledger", "--balance", "5"])).code).toBe(0);
    const { secret, id } = await newKey(["--account", "ledger", "--name", "ledger"]);
    await keySeen(secret);
    const warm = await Promise.all(Array.from({ length: 10 }, () => chat(secret, "hello")));
    await Promise.all(warm.map((r) => r.text()));
    // Relative: the killed worker's upstream stream never reported its end to the counting proxy.
    const openBefore = upstream.open;
    const inFlight = Array.from({ length: 6 }, (_, i) => i % 2 === 0).map((stream) =>
      chat(secret, "in flight at shutdown sim:ttft=600", stream).then(async (r) => ({
        stream,
        status: r.status,
        body: await r.text(),
      })),
    );
    await waitFor("streams open upstream", async () => (upstream.open >= openBefore + 6 ? true : undefined));
    expect(await gw.stop()).toBe(0);
    const drained = await Promise.all(inFlight);
    for (const r of drained) {
      expect(r.status).toBe(200);
      expect(r.body).toContain(r.stream ? "data: [DONE]" : '"finish_reason"');
    }
    const successes = warm.filter((r) => r.status === 200).length + drained.length;
    expect(successes).toBe(16);
    expect(gw.logs()).toContain('"msg":"stopped","workers":2');

    const usage = await gw.cli(["usage", "--key", id, "--json"]);
    const rows = JSON.parse(usage.stdout) as { requests: number; cost_nanos: number }[];
    expect(rows).toHaveLength(1);
    expect(rows[0]?.requests).toBe(successes);
    const accounts = JSON.parse((await gw.cli(["accounts", "list", "--json"])).stdout) as {
      name: string;
      balance_nanos: number;
    }[];
    const balance = accounts.find((a) => a.name === "ledger")?.balance_nanos;
    expect(balance).toBe(5_000_000_000 - (rows[0]?.cost_nanos ?? 0));
    expect(rows[0]?.cost_nanos).toBeGreaterThan(0);
  }, 30_000);
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("cluster start and end", () => {
  test("when the primary dies, its workers exit and the port is free again", async () => {
    const own = await startGateway({ args: ["--workers", "2"] });
    try {
      const pids = [...own.logs().matchAll(/"msg":"worker listening","worker":\d,"pid":(\d+)/g)].map((m) =>
        Number(m[1]),
      );
      expect(pids).toHaveLength(2);
      own.proc.kill("SIGKILL");
      await own.proc.exited;
      const until = Date.now() + 10_000;
      while (pids.some(alive) && Date.now() < until) await Bun.sleep(25);
      expect(pids.filter(alive)).toEqual([]);
      expect(own.logs()).toContain("the cluster primary is gone");
      const { port } = new URL(own.url);
      const again = Bun.listen({ hostname: "127.0.0.1", port: Number(port), socket: { data() {} } });
      again.stop(true);
    } finally {
      await own.dispose();
    }
  }, 20_000);

  test("a port already in use fails the start, as it does for one process", async () => {
    const busy = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const dir = tempDir();
    try {
      const db = `sqlite://${dir}/modelgate.db`;
      const result = await runCli([
        "serve",
        "--workers",
        "2",
        "--listen",
        `127.0.0.1:${busy.port}`,
        "--db",
        db,
      ]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`server.listen: cannot listen on 127.0.0.1:${busy.port}`);
    } finally {
      busy.stop(true);
    }
  });
});
