// Cluster acceptance, limits and money: three compiled `serve` nodes on one PostgreSQL database and
// one Redis prefix enforce one RPM window, one set of concurrency slots and one balance together,
// and every admitted request is stored exactly once in PostgreSQL with the balance falling by
// exactly what was stored.
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { Cluster, chat, outcome } from "../helpers/cluster.ts";
import { balanceOf } from "../helpers/gateway.ts";
import { waitFor } from "../helpers/wait.ts";
import { dropPgDatabases } from "../unit/store-pg-fixture.ts";

// Dropping several databases takes seconds on a loaded machine.
afterAll(dropPgDatabases, 30_000);

const clusters: Cluster[] = [];
afterEach(async () => {
  for (const cluster of clusters.splice(0)) await cluster.dispose();
}, 30_000);

async function cluster(config?: string): Promise<Cluster> {
  const started = await Cluster.start(config === undefined ? {} : { config });
  clusters.push(started);
  return started;
}

describe("three nodes, one PostgreSQL, one Redis", () => {
  test("RPM 6 across three nodes: of 18 requests round robin exactly 6 pass, 12 are 429 with Retry-After, 6 rows stored", async () => {
    const c = await cluster();
    const { secret, id } = await c.createKey(["--account", "default", "--rpm", "6", "--name", "rpm6"]);
    await c.waitForKey(secret);
    const results: { status: number; code: string | null; retryAfter: string | null }[] = [];
    for (let i = 0; i < 18; i++) {
      const response = await chat(c.node(i), secret);
      const retryAfter = response.headers.get("retry-after");
      results.push({ ...(await outcome(response)), retryAfter });
    }
    const passed = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status !== 200);
    expect(passed.length).toBe(6);
    expect(refused.length).toBe(12);
    for (const r of refused) {
      expect(r.status).toBe(429);
      expect(r.code).toBe("rate_limit_exceeded");
      expect(Number(r.retryAfter)).toBeGreaterThan(0);
    }
    // Every success has exactly one usage record in PostgreSQL, and nothing more is stored.
    const usage = await c.usageSettled(id, 6);
    await Bun.sleep(300);
    expect((await c.usageOf(id)).requests).toBe(6);
    expect(usage.cost).toBeGreaterThan(0);
  }, 30_000);

  test("TPM across three nodes: a limit that fits 2 worst cases admits exactly 2 of 9 held requests, 7 are 429 rate_limit_exceeded", async () => {
    const c = await cluster();
    const hold = { prompt: "hold sim:ttft=30000", stream: true } as const;
    const abort = new AbortController();
    // The request's worst case in tokens, as a key with a large limit sees it held.
    const probe = await c.createKey(["--account", "default", "--tpm", "1000000", "--name", "probe"]);
    await c.waitForKey(probe.secret);
    const probed = await chat(c.node(0), probe.secret, { ...hold, signal: abort.signal });
    const worst = 1_000_000 - Number(probed.headers.get("x-ratelimit-remaining-tokens"));
    expect(worst).toBeGreaterThan(20);
    const { secret } = await c.createKey([
      "--account",
      "default",
      "--tpm",
      String(3 * worst - 1),
      "--name",
      "tpm",
    ]);
    await c.waitForKey(secret);
    const responses = await Promise.all(
      Array.from({ length: 9 }, (_, i) => chat(c.node(i), secret, { ...hold, signal: abort.signal })),
    );
    const refused = responses.filter((r) => r.status !== 200);
    for (const r of refused) expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(responses.filter((r) => r.status === 200).length).toBe(2);
    expect((await Promise.all(refused.map(outcome))).map((r) => `${r.status} ${r.code}`)).toEqual(
      Array(7).fill("429 rate_limit_exceeded"),
    );
    abort.abort();
  }, 30_000);

  test("an account's monthly budget across three nodes: of 9 held requests exactly the 2 that fit are admitted, 7 are 429 budget_exceeded", async () => {
    const c = await cluster();
    const hold = { prompt: "hold sim:ttft=30000", stream: true } as const;
    const abort = new AbortController();
    // The request's worst-case cost, as the balance endpoint shows it reserved while one is held.
    const probe = await c.createKey(["--account", "default", "--name", "probe"]);
    await c.waitForKey(probe.secret);
    void chat(c.node(0), probe.secret, { ...hold, signal: abort.signal }).catch(() => undefined);
    const worst = await waitFor("the probe's reservation", async () => {
      const reserved = Number((await balanceOf(c.node(0), probe.secret)).reserved_today_nanos);
      return reserved > 0 ? reserved : undefined;
    });
    const made = await c.cli(["accounts", "create", "team", "--balance", "100"]);
    expect(made.code).toBe(0);
    const budget = ((3 * worst - 1) / 1e9).toFixed(9);
    const set = await c.cli(["accounts", "budgets", "team", "--budget", `monthly=${budget}`]);
    expect(set.code).toBe(0);
    const { secret } = await c.createKey(["--account", "team", "--name", "budgeted"]);
    await c.waitForKey(secret);
    const responses = await Promise.all(
      Array.from({ length: 9 }, (_, i) => chat(c.node(i), secret, { ...hold, signal: abort.signal })),
    );
    expect(responses.filter((r) => r.status === 200).length).toBe(2);
    const refused = await Promise.all(responses.filter((r) => r.status !== 200).map(outcome));
    expect(refused.map((r) => `${r.status} ${r.code}`)).toEqual(Array(7).fill("429 budget_exceeded"));
    abort.abort();
  }, 30_000);

  test("concurrency 2 across three nodes: of 9 held requests exactly 2 are admitted, 7 concurrency_limit_exceeded", async () => {
    const c = await cluster();
    const { secret } = await c.createKey(["--account", "default", "--concurrency", "2", "--name", "conc2"]);
    await c.waitForKey(secret);
    const abort = new AbortController();
    const responses = await Promise.all(
      Array.from({ length: 9 }, (_, i) =>
        chat(c.node(i), secret, { prompt: "hold sim:ttft=30000", stream: true, signal: abort.signal }),
      ),
    );
    const admitted = responses.filter((r) => r.status === 200);
    const refused = await Promise.all(responses.filter((r) => r.status !== 200).map(outcome));
    expect(admitted.length).toBe(2);
    expect(refused.map((r) => `${r.status} ${r.code}`)).toEqual(
      Array(7).fill("429 concurrency_limit_exceeded"),
    );
    abort.abort();
  }, 30_000);

  test("a balance of exactly 10 worst-case reservations, 45 concurrent requests over three nodes: 10 admitted, balance ≥ 0, Σ usage = start − end", async () => {
    const c = await cluster();
    // The worst case of this request, from the refusal of an account that cannot cover it.
    await c.cli(["accounts", "create", "probe", "--balance", "0.000000001"]);
    const probe = await c.createKey(["--account", "probe", "--name", "probe"]);
    await c.waitForKey(probe.secret);
    const body = { prompt: "spend sim:ttft=4000", stream: true } as const;
    const probeAnswer = await chat(c.node(0), probe.secret, body);
    expect(probeAnswer.status).toBe(429);
    const message = ((await probeAnswer.json()) as { error: { message: string } }).error.message;
    const worstUsd = /worst-case cost of ([0-9.]+) USD/.exec(message)?.[1];
    if (!worstUsd) throw new Error(`no worst case in: ${message}`);
    const worstNanos = Math.round(Number(worstUsd) * 1e9);
    expect(worstNanos).toBeGreaterThan(0);

    const start = (10 * worstNanos) / 1e9;
    await c.cli(["accounts", "create", "tight", "--balance", start.toFixed(9)]);
    const { secret, id } = await c.createKey(["--account", "tight", "--name", "tight"]);
    await c.waitForKey(secret);
    const responses = await Promise.all(Array.from({ length: 45 }, (_, i) => chat(c.node(i), secret, body)));
    const results = await Promise.all(responses.map(outcome));
    const admitted = results.filter((r) => r.status === 200).length;
    // Every request arrived while the admitted ones still held their reservations (4 s to first token).
    expect(admitted).toBe(10);
    for (const r of results.filter((r) => r.status !== 200)) {
      expect(`${r.status} ${r.code}`).toBe("429 insufficient_quota");
    }
    const usage = await c.usageSettled(id, admitted);
    expect(usage.requests).toBe(admitted);
    const end = await c.balanceUsd("tight");
    expect(end).toBeGreaterThanOrEqual(0);
    expect(Math.round((start - end) * 1e9)).toBe(Math.round(usage.cost * 1e9));
  }, 30_000);
});
