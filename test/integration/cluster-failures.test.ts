// Cluster acceptance, changes and failures: three compiled `serve` nodes on one PostgreSQL database
// and one Redis prefix. A key revoked, a group changed or an account credited by the CLI is seen by
// every node within 1 s; a SIGKILLed node's concurrency slot frees itself within the lease and
// nothing is charged twice; Redis stopped answers 503 fast, and Redis restarted empty is reseeded
// from PostgreSQL exactly (the balance every node reports equals the stored one, limits exact
// again), even while a node cut off from PostgreSQL holds settlements not stored yet.
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { Cluster, chat, outcome } from "../helpers/cluster.ts";
import { type RunningGateway, runCli, startGateway } from "../helpers/gateway.ts";
import { dropPrefix, PrivateRedis, REDIS_URL, testPrefix } from "../unit/limits-redis-fixture.ts";
import { CommitCutter, dropPgDatabases, pgDatabase } from "../unit/store-pg-fixture.ts";

// Dropping several databases takes seconds on a loaded machine.
afterAll(dropPgDatabases, 30_000);

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
}, 30_000);

async function cluster(options: Parameters<typeof Cluster.start>[0] = {}): Promise<Cluster> {
  const started = await Cluster.start(options);
  cleanups.push(() => started.dispose());
  return started;
}

async function balanceNanos(node: RunningGateway, secret: string): Promise<Record<string, number>> {
  const response = await fetch(`${node.url}/v1/dashboard/billing/balance`, {
    headers: { authorization: `Bearer ${secret}` },
  });
  if (response.status !== 200) throw new Error(`balance answered ${response.status}`);
  return (await response.json()) as Record<string, number>;
}

/**
 * Two nodes, and a third that reaches PostgreSQL through a loopback proxy the test can cut (all on
 * one Redis prefix); an account "team" with $1.
 */
async function clusterWithCutNode(): Promise<{ c: Cluster; cutter: CommitCutter; cut: RunningGateway }> {
  const c = await cluster({ nodes: 2 });
  const url = new URL(c.db);
  const cutter = new CommitCutter({ hostname: url.hostname, port: Number(url.port || 5432) });
  cleanups.push(async () => cutter.stop());
  const cut = await c.addNode(cutter.url(c.db));
  await c.cli(["accounts", "create", "team", "--balance", "1"]);
  return { c, cutter, cut };
}

/** /readyz of a node: its status and what it says of both engines. */
async function ready(node: RunningGateway): Promise<{ status: number; store: string; limiter: string }> {
  const response = await fetch(`${node.url}/readyz`);
  const body = (await response.json()) as { store: string; limiter: string };
  return { status: response.status, store: body.store, limiter: body.limiter };
}

/** Ms until `check` holds on every node (each polled every 25 ms), measured from now. */
async function untilEveryNode(
  what: string,
  nodes: RunningGateway[],
  check: (node: RunningGateway) => Promise<boolean>,
): Promise<number[]> {
  const started = performance.now();
  return Promise.all(
    nodes.map(async (node) => {
      for (let i = 0; i < 200; i++) {
        if (await check(node)) return performance.now() - started;
        await Bun.sleep(25);
      }
      throw new Error(`${node.url} did not see ${what} within 5 s`);
    }),
  );
}

describe("changes reach every node", () => {
  test("a key revoked, a group changed and an account credited by the CLI are seen by all three nodes (the times logged)", async () => {
    const c = await cluster();
    await c.cli(["accounts", "create", "team", "--balance", "1"]);
    await c.cli(["groups", "set", "mini", "--models", "modelx-5.4-mini"]);
    const revoked = await c.createKey(["--account", "team", "--name", "gone"]);
    const grouped = await c.createKey(["--account", "team", "--group", "mini", "--name", "grouped"]);
    await c.waitForKey(revoked.secret);
    await c.waitForKey(grouped.secret);
    for (const node of c.nodes) expect((await outcome(await chat(node, grouped.secret))).status).toBe(200);

    await c.cli(["keys", "revoke", revoked.id]);
    const revocation = await untilEveryNode("the revocation", c.nodes, async (node) => {
      const response = await chat(node, revoked.secret);
      await response.arrayBuffer();
      return response.status === 401;
    });

    await c.cli(["groups", "set", "mini", "--models", "modelx-5.5"]);
    const group = await untilEveryNode("the group change", c.nodes, async (node) => {
      const response = await chat(node, grouped.secret);
      await response.arrayBuffer();
      return response.status !== 200;
    });

    const before = await balanceNanos(c.node(0), grouped.secret);
    await c.cli(["accounts", "credit", "team", "2"]);
    const credit = await untilEveryNode("the credit", c.nodes, async (node) => {
      const now = await balanceNanos(node, grouped.secret);
      return (now.balance_nanos ?? 0) === (before.balance_nanos ?? 0) + 2_000_000_000;
    });
    console.log(
      `propagation ms (3 nodes): revoke ${revocation.map(Math.round)}, group ${group.map(Math.round)}, credit ${credit.map(Math.round)}`,
    );
  }, 30_000);
});

describe("failures", () => {
  test("SIGKILL of a node holding a concurrency-1 slot: refused elsewhere until the lease runs out, then usable; nothing charged for it", async () => {
    const c = await cluster({ config: "[redis]\nlease_seconds = 3\n" });
    await c.cli(["accounts", "create", "victim", "--balance", "1"]);
    const { secret, id } = await c.createKey([
      "--account",
      "victim",
      "--concurrency",
      "1",
      "--name",
      "victim",
    ]);
    await c.waitForKey(secret);
    const [dying, second, third] = [c.node(0), c.node(1), c.node(2)];
    const held = await chat(dying, secret, { prompt: "hold sim:ttft=30000", stream: true });
    expect(held.status).toBe(200);
    await c.kill(dying);
    await held.text().catch(() => "connection closed");

    expect(await outcome(await chat(second, secret))).toEqual({
      status: 429,
      code: "concurrency_limit_exceeded",
    });
    const killedAt = performance.now();
    let freed = 0;
    for (let i = 0; i < 300 && freed === 0; i++) {
      const node = i % 2 === 0 ? third : second;
      if ((await outcome(await chat(node, secret))).status === 200) freed = performance.now() - killedAt;
      else await Bun.sleep(100);
    }
    console.log(`slot usable again after ${Math.round(freed)} ms (lease 3 s)`);
    expect(freed).toBeGreaterThan(0);
    expect(freed).toBeLessThan(30_000);

    // One request completed and is stored once; the killed one never settled and reserves nothing.
    const usage = await c.usageSettled(id, 1);
    expect(usage.requests).toBe(1);
    const view = await balanceNanos(second, secret);
    expect(view.in_flight).toBe(0);
    expect(view.reserved_nanos).toBe(0);
    expect(Math.round(usage.cost * 1e9)).toBe(1_000_000_000 - (view.balance_nanos ?? 0));
    expect(Math.round((1 - (await c.balanceUsd("victim"))) * 1e9)).toBe(Math.round(usage.cost * 1e9));
  }, 60_000);

  test("Redis stopped: money admissions on every node answer 503 limiter_unavailable; restarted empty: reseeded exactly, limits exact again", async () => {
    const redis = await PrivateRedis.start();
    cleanups.push(() => redis.kill());
    const c = await cluster({ redisUrl: redis.url });
    await c.cli(["accounts", "create", "team", "--balance", "1"]);
    const { secret, id } = await c.createKey(["--account", "team", "--rpm", "3", "--name", "rpm3"]);
    await c.waitForKey(secret);
    for (const node of c.nodes) expect((await outcome(await chat(node, secret))).status).toBe(200);
    expect(await ready(c.node(0))).toEqual({ status: 200, store: "ok", limiter: "ok" });

    await redis.kill();
    const elapsed: number[] = [];
    for (const node of c.nodes) {
      const started = performance.now();
      const response = await chat(node, secret);
      elapsed.push(performance.now() - started);
      expect(response.headers.get("retry-after")).toBe("1");
      expect(await outcome(response)).toEqual({ status: 503, code: "limiter_unavailable" });
    }
    console.log(`503 limiter_unavailable answered in ms: ${elapsed.map(Math.round)}`);
    const down = await ready(c.node(1));
    expect(down.status).toBe(503);
    expect(down.store).toBe("ok");
    expect(down.limiter).toContain(`Redis at ${redis.url}`);

    await redis.restart(); // empty: nothing was saved
    const stored = await c.usageSettled(id, 3);
    expect(stored.requests).toBe(3);
    // The window was lost with Redis: three requests pass again over the nodes, the fourth is refused.
    const statuses: string[] = [];
    for (let i = 0; i < 4; i++) {
      let result = await outcome(await chat(c.node(i), secret));
      for (let tries = 0; tries < 50 && result.status === 503; tries++) {
        await Bun.sleep(100);
        result = await outcome(await chat(c.node(i), secret));
      }
      statuses.push(`${result.status} ${result.code ?? ""}`.trim());
    }
    expect(statuses).toEqual(["200", "200", "200", "429 rate_limit_exceeded"]);

    // The reseeded balance is PostgreSQL's balance, on every node, once their settlements are stored.
    const settled = await c.usageSettled(id, 6);
    expect(settled.requests).toBe(6);
    const storedUsd = await c.balanceUsd("team");
    expect(Math.round((1 - storedUsd) * 1e9)).toBe(Math.round(settled.cost * 1e9));
    for (const node of c.nodes) {
      const view = await balanceNanos(node, secret);
      expect(view.balance_nanos).toBe(Math.round(storedUsd * 1e9));
      expect(view.reserved_nanos).toBe(0);
    }
  }, 60_000);

  test("PostgreSQL cut off from one node: it keeps admitting on Redis, /readyz says the store is down, usage is stored once it is back", async () => {
    const { c, cutter, cut } = await clusterWithCutNode();
    const { secret, id } = await c.createKey(["--account", "team", "--rpm", "4", "--name", "cut"]);
    await c.waitForKey(secret);
    expect(await ready(cut)).toEqual({ status: 200, store: "ok", limiter: "ok" });

    cutter.refuse = true;
    const down = await ready(cut);
    expect(down.status).toBe(503);
    expect(down.store).not.toBe("ok");
    expect(down.limiter).toBe("ok");
    // Admission stays exact across nodes on Redis: RPM 4, three on the cut node, two on the other.
    const statuses: number[] = [];
    for (const node of [cut, cut, cut, c.node(0), c.node(1)])
      statuses.push((await outcome(await chat(node, secret))).status);
    expect(statuses).toEqual([200, 200, 200, 200, 429]);
    // The other node's one is stored (waited for, not slept on); the cut node's three wait in its journal.
    expect((await c.usageSettled(id, 1)).requests).toBe(1);

    cutter.refuse = false;
    const usage = await c.usageSettled(id, 4);
    expect(usage.requests).toBe(4);
    expect(Math.round((1 - (await c.balanceUsd("team"))) * 1e9)).toBe(Math.round(usage.cost * 1e9));
    expect((await ready(cut)).status).toBe(200);
  }, 60_000);

  test("a node without Redis on a database other nodes serve, or the reverse, is refused at start with the fix", async () => {
    const db = await pgDatabase();
    const alone = await startGateway({ args: ["--db", db] });
    cleanups.push(() => alone.dispose());
    const serve = ["serve", "--listen", "127.0.0.1:0", "--db", db];
    const second = await runCli(serve);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain("nodes on one database must share one Redis");
    const shared = await runCli([...serve, "--redis-url", REDIS_URL, "--redis-prefix", testPrefix()]);
    expect(shared.code).toBe(1);
    expect(shared.stderr).toContain("a modelgate node without Redis already serves this PostgreSQL database");
    expect(await alone.stop()).toBe(0);

    // Once it stopped, nodes sharing a Redis join freely, and then a node without Redis is refused.
    const prefix = testPrefix();
    cleanups.push(() => dropPrefix(prefix));
    const redisArgs = ["--db", db, "--redis-url", REDIS_URL, "--redis-prefix", prefix];
    const one = await startGateway({ args: redisArgs });
    cleanups.push(() => one.dispose());
    const two = await startGateway({ args: redisArgs });
    cleanups.push(() => two.dispose());
    const refused = await runCli(serve);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("another modelgate node already serves this PostgreSQL database");
  }, 60_000);

  test("no drift: Redis loses its data while a node holds unstored settlements; the rebuild counts them, and Redis equals the ledger once they are stored", async () => {
    const { c, cutter, cut } = await clusterWithCutNode();
    const { secret, id } = await c.createKey(["--account", "team", "--name", "drift"]);
    await c.waitForKey(secret);
    const seeing = c.node(0);

    // The cut-off node settles two requests: debited in Redis, stored only in its journal.
    cutter.refuse = true;
    const before = (await balanceNanos(seeing, secret)).balance_nanos ?? 0;
    for (let i = 0; i < 2; i++) expect((await outcome(await chat(cut, secret))).status).toBe(200);
    const unstored = before - ((await balanceNanos(seeing, secret)).balance_nanos ?? 0);
    expect(unstored).toBeGreaterThan(0);

    // Redis loses everything; the rebuild from PostgreSQL (which lacks those two) waits for the cut
    // node to send them again in the new epoch, so the balance after it still counts them.
    await dropPrefix(c.prefix);
    expect((await outcome(await chat(seeing, secret))).status).toBe(200);
    expect(before - ((await balanceNanos(seeing, secret)).balance_nanos ?? 0)).toBeGreaterThan(unstored);
    cutter.refuse = false;
    const usage = await c.usageSettled(id, 3);
    expect(usage.requests).toBe(3);
    const stored = Math.round((await c.balanceUsd("team")) * 1e9);
    expect(1_000_000_000 - stored).toBe(Math.round(usage.cost * 1e9)); // the ledger is exact
    for (const node of c.nodes) expect((await balanceNanos(node, secret)).balance_nanos).toBe(stored);
  }, 60_000);
});
