// Limits and quotas through the compiled binary over HTTP: a concurrency limit counted at the
// upstream, daily-cap and balance races, the balance endpoint, `modelgate usage`, and the official
// openai SDK waiting out our 429's Retry-After and then succeeding.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { formatUsd } from "../../src/base/money.ts";
import { type SimServer, startSimServer } from "../../src/sim/server.ts";
import { chat as chatTo } from "../helpers/chat-rig.ts";
import { startCountingProxy, type UpstreamCounts } from "../helpers/counting-proxy.ts";
import {
  balanceOf as balanceFor,
  createKey,
  errorCode,
  type RunningGateway,
  startGateway,
} from "../helpers/gateway.ts";
import { keyAccepted, waitFor } from "../helpers/wait.ts";

let sim: SimServer;
let proxy: ReturnType<typeof Bun.serve>;
let gw: RunningGateway;
let upstream: UpstreamCounts;

beforeAll(async () => {
  sim = startSimServer({ hostname: "127.0.0.1", port: 0, seed: 5 });
  const counting = startCountingProxy(sim.url);
  proxy = counting.server;
  upstream = counting.counts;
  gw = await startGateway({
    config: `[bootstrap]\nbalance_usd = "100"\n[[channels]]\nkind = "openai-chat"\nname = "sim-chat"\nbase_url = "http://127.0.0.1:${proxy.port}/v1"\napi_key_env = "SIM_UPSTREAM_KEY"\nmodels = ["modelx-*"]\n`,
    env: { SIM_UPSTREAM_KEY: "sk-upstream" },
  });
});

afterAll(async () => {
  await gw.dispose();
  proxy.stop(true);
  await sim.stop();
});

const newKey = (args: string[]) => createKey(gw, args);

const chat = (secret: string, prompt: string, stream = false) =>
  chatTo(gw, secret, { prompt, stream, maxTokens: 50 });

const balanceOf = (secret: string) => balanceFor(gw, secret);

const SLOW = "count to five sim:ttft=1500";

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

describe("limits over HTTP", () => {
  test("a concurrency limit of 3 with 20 parallel streams: 3 open upstream at most, 17 get 429", async () => {
    const { secret } = await newKey(["--account", "default", "--concurrency", "3", "--name", "conc3"]);
    await keyAccepted(gw.url, secret);
    const before = upstream.opened;
    upstream.peak = upstream.open;
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => chat(secret, "stream please sim:ttft=800", true)),
    );
    const ok = responses.filter((r) => r.status === 200);
    const refused = responses.filter((r) => r.status === 429);
    expect(ok.length).toBe(3);
    expect(refused.length).toBe(17);
    for (const r of refused) {
      expect(r.headers.get("retry-after")).toBe("1");
      expect(r.headers.get("retry-after-ms")).toBe("1000");
      expect(await errorCode(r)).toBe("concurrency_limit_exceeded");
    }
    for (const r of ok) {
      expect(r.headers.get("x-ratelimit-limit-requests")).toMatch(/^\d+$/);
      expect(r.headers.get("x-ratelimit-remaining-requests")).toMatch(/^\d+$/);
      expect(r.headers.get("x-ratelimit-reset-requests")).toMatch(/^[\dm.]+s$/);
      expect(await r.text()).toContain("data: [DONE]");
    }
    expect(upstream.opened - before).toBe(3);
    expect(upstream.peak).toBeLessThanOrEqual(3);
  }, 30_000);

  test("50 concurrent requests against a daily cap that fits exactly 10: 10 pass, 40 daily_quota_exceeded", async () => {
    const probe = await newKey(["--account", "default", "--name", "probe"]);
    await keyAccepted(gw.url, probe.secret);
    const worst = await worstCaseNanos(probe.secret);
    const cap = 10 * worst;
    const { secret, id } = await newKey([
      "--account",
      "default",
      "--name",
      "capped",
      "--daily-cap",
      formatUsd(cap),
    ]);
    await keyAccepted(gw.url, secret);
    const responses = await Promise.all(Array.from({ length: 50 }, () => chat(secret, SLOW)));
    expect(responses.filter((r) => r.status === 200).length).toBe(10);
    const refused = responses.filter((r) => r.status === 429);
    expect(refused.length).toBe(40);
    for (const r of refused) {
      expect(await errorCode(r)).toBe("daily_quota_exceeded");
      expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(r.headers.get("x-should-retry")).toBe("false");
    }
    const view = await balanceOf(secret);
    expect(view.daily_cap_nanos).toBe(cap);
    expect(Number(view.spent_today_nanos)).toBeGreaterThan(0);
    expect(Number(view.spent_today_nanos)).toBeLessThanOrEqual(cap);
    expect(view.reserved_today_nanos).toBe(0);
    expect(view.remaining_today_nanos).toBe(cap - Number(view.spent_today_nanos));
    // The store thread commits journalled records in batches: the CLI, another process, reads them once in.
    type Row = { requests: number; cost_nanos: number; cost_usd: string };
    const rows = await waitFor("the 10 usage records in the store", async () => {
      const found = JSON.parse((await gw.cli(["usage", "--key", id, "--json"])).stdout) as Row[];
      return found[0]?.requests === 10 ? found : undefined;
    });
    expect(rows).toHaveLength(1);
    expect(rows[0]?.requests).toBe(10);
    expect(rows[0]?.cost_nanos).toBe(Number(view.spent_today_nanos));
    expect(rows[0]?.cost_usd).toBe(formatUsd(Number(view.spent_today_nanos)));
  }, 30_000);

  test("50 concurrent requests against a balance that fits exactly 10: 10 pass, 40 insufficient_quota", async () => {
    const probe = await newKey(["--account", "default", "--name", "probe2"]);
    await keyAccepted(gw.url, probe.secret);
    const worst = await worstCaseNanos(probe.secret);
    expect((await gw.cli(["accounts", "create", "poor", "--balance", formatUsd(10 * worst)])).code).toBe(0);
    const { secret } = await newKey(["--account", "poor", "--name", "poor"]);
    await keyAccepted(gw.url, secret);
    const responses = await Promise.all(Array.from({ length: 50 }, () => chat(secret, SLOW)));
    expect(responses.filter((r) => r.status === 200).length).toBe(10);
    const refused = responses.filter((r) => r.status === 429);
    expect(refused.length).toBe(40);
    for (const r of refused) expect(await errorCode(r)).toBe("insufficient_quota");
    const view = await balanceOf(secret);
    expect(Number(view.balance_nanos)).toBeGreaterThanOrEqual(0);
    expect(view.currency).toBe("USD");
    expect(view.account).toBe("poor");
    // The store's ledger catches up with the gateway's once the store thread committed the batch.
    type AccountRow = { name: string; balance_nanos: number };
    const accounts = await waitFor("the store's balance to match the gateway's", async () => {
      const found = JSON.parse((await gw.cli(["accounts", "list", "--json"])).stdout) as AccountRow[];
      const poor = found.find((a) => a.name === "poor");
      return poor?.balance_nanos === Number(view.balance_nanos) ? found : undefined;
    }).catch(async () => JSON.parse((await gw.cli(["accounts", "list", "--json"])).stdout) as AccountRow[]);
    expect(accounts.find((a) => a.name === "poor")?.balance_nanos).toBe(Number(view.balance_nanos));
  }, 30_000);

  test("the official openai SDK waits out our 429 Retry-After and then succeeds", async () => {
    const { secret } = await newKey(["--account", "default", "--concurrency", "1", "--name", "sdk"]);
    await keyAccepted(gw.url, secret);
    const holder = chat(secret, "hold the slot sim:ttft=600", true);
    // The holder has its slot once its reservation shows (both are taken at admission).
    await waitFor(
      "the holder's reservation",
      async () => Number((await balanceOf(secret)).reserved_today_nanos) > 0,
    );
    const statuses: number[] = [];
    const client = new OpenAI({
      apiKey: secret,
      baseURL: `${gw.url}/v1`,
      maxRetries: 4,
      fetch: async (url, init) => {
        const response = await fetch(url, init);
        statuses.push(response.status);
        return response;
      },
    });
    const started = performance.now();
    const completion = await client.chat.completions.create({
      model: "modelx-5.4-mini",
      max_tokens: 20,
      messages: [{ role: "user", content: "hello" }],
    });
    const waited = performance.now() - started;
    expect(completion.choices[0]?.message.content?.length).toBeGreaterThan(0);
    expect(statuses[0]).toBe(429);
    expect(statuses.at(-1)).toBe(200);
    expect(waited).toBeGreaterThanOrEqual(900); // retry-after-ms 1000, honoured
    await (await holder).text();
  }, 30_000);
});
