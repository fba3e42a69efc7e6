// `serve --redis-url --redis-prefix` through the compiled binary: one node whose limits live in
// Redis (the RPM window outlives the process: a restart on the same store and prefix still refuses;
// a SIGKILLed node's slot stays leased, then frees itself), balances seeded there, a Redis that dies
// mid-run answered 503
// limiter_unavailable, and a Redis unreachable at start refused with a clear message. Several
// nodes need a shared store (PostgreSQL, not SQLite), so multi-node tests belong to that part.
import { afterEach, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { chat as chatTo } from "../helpers/chat-rig.ts";
import {
  balanceOf,
  createKey,
  errorCode,
  type RunningGateway,
  runCli,
  startGateway,
  tempDir,
} from "../helpers/gateway.ts";
import { keyAccepted } from "../helpers/wait.ts";
import { dropPrefix, keysUnder, PrivateRedis, REDIS_URL, testPrefix } from "../unit/limits-redis-fixture.ts";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const chat = (gw: RunningGateway, secret: string, prompt = "hello", stream = false) =>
  chatTo(gw, secret, { prompt, stream });

async function serveOnRedis(options: { dir: string; prefix: string; url?: string }): Promise<RunningGateway> {
  const gw = await startGateway({
    dir: options.dir,
    args: ["--redis-url", options.url ?? REDIS_URL, "--redis-prefix", options.prefix],
  });
  cleanups.push(() => gw.stop());
  return gw;
}

/** A fresh directory (its SQLite file) and Redis prefix, both removed after the test. */
function scratch(): { dir: string; prefix: string } {
  const dir = tempDir();
  const prefix = testPrefix();
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  cleanups.push(() => dropPrefix(prefix));
  return { dir, prefix };
}

describe("serve on Redis", () => {
  test("the RPM window lives in Redis: 3 of 4 pass, and after a restart the 4th is still refused", async () => {
    const { dir, prefix } = scratch();
    const first = await serveOnRedis({ dir, prefix });
    expect(first.logs()).toContain(`"limiter":"redis, prefix ${prefix}"`);
    const { secret } = await createKey(first, ["--account", "default", "--rpm", "3", "--name", "rpm3"]);
    await keyAccepted(first.url, secret);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const response = await chat(first, secret);
      statuses.push(response.status);
      await response.text();
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect((await keysUnder(prefix)).some((key) => key.includes("{acct:"))).toBe(true);
    expect(await first.stop()).toBe(0);

    const second = await serveOnRedis({ dir, prefix });
    const refused = await chat(second, secret);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).not.toBeNull();
    expect(await errorCode(refused)).toBe("rate_limit_exceeded");
  });

  test("balances come from the store and settle in Redis: the balance endpoint shows the debit", async () => {
    const gw = await serveOnRedis(scratch());
    const key = gw.key;
    if (!key) throw new Error("no bootstrap key");
    const before = await balanceOf(gw, key);
    const response = await chat(gw, key);
    expect(response.status).toBe(200);
    await response.text();
    const after = await balanceOf(gw, key);
    expect(Number(after.balance_nanos)).toBeLessThan(Number(before.balance_nanos));
    expect(after.reserved_today_nanos).toBe(0);
  });

  test("SIGKILL of a node holding a concurrency-1 slot: held by its lease, then free, nothing charged", async () => {
    const { dir, prefix } = scratch();
    const config = "[redis]\nlease_seconds = 8\n";
    const first = await startGateway({
      dir,
      config,
      args: ["--redis-url", REDIS_URL, "--redis-prefix", prefix],
    });
    cleanups.push(() => first.stop());
    expect((await first.cli(["accounts", "create", "victim", "--balance", "1"])).code).toBe(0);
    const { secret } = await createKey(first, [
      "--account",
      "victim",
      "--concurrency",
      "1",
      "--name",
      "victim",
    ]);
    await keyAccepted(first.url, secret);
    const held = await chat(first, secret, "hold sim:ttft=30000", true);
    expect(held.status).toBe(200);
    expect((await balanceOf(first, secret)).in_flight).toBe(1);
    first.proc.kill("SIGKILL");
    await first.proc.exited;
    await held.text().catch(() => "connection closed");

    // The same store and prefix, a new process: the dead one's lease still holds the slot.
    const second = await startGateway({
      dir,
      config,
      args: ["--redis-url", REDIS_URL, "--redis-prefix", prefix],
    });
    cleanups.push(() => second.stop());
    const refused = await chat(second, secret);
    expect(refused.status).toBe(429);
    expect(await errorCode(refused)).toBe("concurrency_limit_exceeded");
    let status = 429;
    for (let i = 0; i < 200 && status === 429; i++) {
      const response = await chat(second, secret);
      status = response.status;
      await response.text();
      if (status === 429) await Bun.sleep(100);
    }
    expect(status).toBe(200);
    const after = await balanceOf(second, secret);
    expect(after.in_flight).toBe(0);
    expect(after.reserved_nanos).toBe(0);
    // Only the request that completed is charged (it is all of today's spending); the killed one
    // never settled and its reservation is gone.
    expect(Number(after.spent_today_nanos)).toBeGreaterThan(0);
    expect(Number(after.balance_nanos) + Number(after.spent_today_nanos)).toBe(1_000_000_000);
  }, 40_000);

  test("Redis killed while serving: 503 limiter_unavailable with Retry-After; restarted empty: serving again", async () => {
    const redis = await PrivateRedis.start();
    cleanups.push(() => redis.kill());
    const dir = tempDir();
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    const gw = await serveOnRedis({ dir, prefix: "mg", url: redis.url });
    const key = gw.key;
    if (!key) throw new Error("no bootstrap key");
    const ok = await chat(gw, key);
    expect(ok.status).toBe(200);
    await ok.text();

    await redis.kill();
    const refused = await chat(gw, key);
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(await errorCode(refused)).toBe("limiter_unavailable");

    await redis.restart();
    let status = 0;
    for (let i = 0; i < 50 && status !== 200; i++) {
      const response = await chat(gw, key);
      status = response.status;
      await response.text();
      if (status !== 200) await Bun.sleep(100);
    }
    // The account was reseeded from the store (Redis came back empty).
    expect(status).toBe(200);
    expect(await gw.stop()).toBe(0);
  });

  test("Redis unreachable at start: serve exits 1 naming redis.url", async () => {
    const redis = await PrivateRedis.start();
    await redis.kill();
    const dir = tempDir();
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    const result = await runCli(["serve", "--listen", "127.0.0.1:0", "--db", `sqlite://${dir}/m.db`], {
      MODELGATE_REDIS_URL: redis.url,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("redis.url: cannot reach the shared limiter");
  });
});
