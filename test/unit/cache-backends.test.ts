// The response cache's two backends pass one contract (src/cache/entry.ts): SQLite (one node) and
// Redis (a cluster; the machine's Redis, under a prefix of its own, dropped after). An answer is
// found until it expires, replaced by a put of the same key, the oldest evicted first when the
// total is over the bound, and purged by scope or all at once.
import { afterAll, describe, expect, test } from "bun:test";
import { RedisClient } from "bun";
import { nanos } from "../../src/base/money.ts";
import { NO_USAGE } from "../../src/billing/contract.ts";
import type { CacheBackend, CachedAnswer } from "../../src/cache/entry.ts";
import { requestKey } from "../../src/cache/entry.ts";
import { RedisCache } from "../../src/cache/redis.ts";
import { SqliteCache } from "../../src/cache/sqlite.ts";
import { mid } from "../helpers/ids.ts";
import { dropPrefix, REDIS_URL, testPrefix } from "./limits-redis-fixture.ts";

const prefixes: string[] = [];
afterAll(async () => {
  for (const prefix of prefixes) await dropPrefix(prefix);
});

const FACTORIES: [string, (maxBytes: number) => Promise<CacheBackend>][] = [
  ["sqlite", async (maxBytes) => new SqliteCache(":memory:", maxBytes)],
  [
    "redis",
    async (maxBytes) => {
      const prefix = testPrefix();
      prefixes.push(prefix);
      return RedisCache.connect(REDIS_URL, prefix, maxBytes);
    },
  ],
];

const T0 = 1_800_000_000_000;

function answer(text: string, createdAt = T0, ttlMs = 60_000): CachedAnswer {
  return {
    protocol: "chat",
    answer: JSON.stringify({ text }),
    usage: { ...NO_USAGE, inputTokens: 10, outputTokens: 5 },
    costNanos: nanos(1234),
    createdAt,
    expiresAt: createdAt + ttlMs,
  };
}

for (const [name, open] of FACTORIES) {
  describe(`the ${name} cache`, () => {
    test("found until it expires; a put replaces", async () => {
      const cache = await open(1_000_000);
      try {
        await cache.put("account:1:a", "account:1", answer("one"));
        expect(await cache.get("account:1:a", T0 + 1)).toEqual(answer("one"));
        expect(await cache.get("account:1:a", T0 + 60_000)).toBeUndefined();
        expect(await cache.get("account:1:b", T0 + 1)).toBeUndefined();
        await cache.put("account:1:a", "account:1", answer("two"));
        expect((await cache.get("account:1:a", T0 + 1))?.answer).toBe(JSON.stringify({ text: "two" }));
      } finally {
        await cache.close();
      }
    });

    test("over the bound, the oldest answers go first", async () => {
      const one = answer("x".repeat(100)).answer.length;
      const cache = await open(one * 3);
      try {
        for (let i = 0; i < 5; i++) await cache.put(`global:${i}`, "global", answer("x".repeat(100), T0 + i));
        const kept = [];
        for (let i = 0; i < 5; i++) kept.push((await cache.get(`global:${i}`, T0 + 10)) !== undefined);
        expect(kept).toEqual([false, false, true, true, true]);
      } finally {
        await cache.close();
      }
    });

    test("purge by scope, then everything", async () => {
      const cache = await open(1_000_000);
      try {
        await cache.put("account:1:a", "account:1", answer("a"));
        await cache.put("account:1:b", "account:1", answer("b"));
        await cache.put("account:2:a", "account:2", answer("c"));
        expect(await cache.purge("account:1")).toBe(2);
        expect(await cache.get("account:1:a", T0 + 1)).toBeUndefined();
        expect(await cache.get("account:2:a", T0 + 1)).toBeDefined();
        expect(await cache.purge()).toBe(1);
        expect(await cache.get("account:2:a", T0 + 1)).toBeUndefined();
      } finally {
        await cache.close();
      }
    });
  });
}

describe("the redis cache reading what another node wrote", () => {
  // Nodes of one cluster share the cache, also across an upgrade: a value of another shape (an older
  // version's usage without a field) or a damaged one is a miss, never a hit billed from missing numbers.
  const written = answer("one");
  const { generations: _dropped, ...olderUsage } = written.usage;
  const cases: [string, string][] = [
    ["not JSON", "{not json"],
    ["usage of another shape", JSON.stringify({ ...written, usage: olderUsage })],
    ["a cost that is not a number", JSON.stringify({ ...written, costNanos: "1234" })],
    ["an unknown protocol", JSON.stringify({ ...written, protocol: "completions" })],
  ];
  for (const [name, value] of cases) {
    test(`${name}: a miss, and the next put replaces it`, async () => {
      const prefix = testPrefix();
      prefixes.push(prefix);
      const cache = await RedisCache.connect(REDIS_URL, prefix, 1_000_000);
      const client = new RedisClient(REDIS_URL);
      try {
        await cache.put("account:1:a", "account:1", written);
        expect(await cache.get("account:1:a", T0 + 1)).toEqual(written);
        await client.set(`${prefix}:{cache}:e:account:1:a`, value);
        expect(await cache.get("account:1:a", T0 + 1)).toBeUndefined();
        await cache.put("account:1:a", "account:1", answer("two"));
        expect(await cache.get("account:1:a", T0 + 1)).toEqual(answer("two"));
      } finally {
        client.close();
        await cache.close();
      }
    });
  }
});

describe("the request key", () => {
  const body = { model: "gpt-4o", messages: [{ role: "user", content: "hi" }], temperature: 0.5 };
  test("stream, stream_options and user do not change it; key order does not; other fields do", () => {
    const key = requestKey("account:1", "/v1/chat/completions", mid("modelx-5.5"), body);
    expect(
      requestKey("account:1", "/v1/chat/completions", mid("modelx-5.5"), {
        temperature: 0.5,
        stream: true,
        stream_options: { include_usage: true },
        user: "someone",
        messages: [{ content: "hi", role: "user" }],
        model: "an-alias",
      }),
    ).toBe(key);
    expect(
      requestKey("account:1", "/v1/chat/completions", mid("modelx-5.5"), { ...body, temperature: 0.6 }),
    ).not.toBe(key);
    expect(requestKey("account:1", "/v1/chat/completions", mid("modelx-5.4"), body)).not.toBe(key);
    expect(requestKey("account:2", "/v1/chat/completions", mid("modelx-5.5"), body)).not.toBe(key);
    expect(requestKey("account:1", "/v1/responses", mid("modelx-5.5"), body)).not.toBe(key);
    expect(key.startsWith("account:1:")).toBe(true);
  });
});
