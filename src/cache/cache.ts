// The exact response cache (`[cache]`, off unless a group or a key turns it on): which requests it
// serves (a key's policy, the request's Cache-Control), the key it finds them by (entry.ts), what
// a hit costs (a fraction of the original), and where answers live — the SQLite file of a single
// node (sqlite.ts), or Redis when nodes share one (redis.ts).
import { nanos } from "../base/money.ts";
import type { AccountId, KeyId, ModelId, Nanos } from "../base/types.ts";
import type { CacheConfig, CachePolicyConfig } from "../config/cache.ts";
import type { Config } from "../config/schema.ts";
import type { CacheBackend, CachedAnswer } from "./entry.ts";
import { requestKey } from "./entry.ts";

export type { CachedAnswer } from "./entry.ts";

/** The answer header that says what the cache did: `hit`, `miss` or `bypass`. */
export const CACHE_HEADER = "x-modelgate-cache";

/** What the cache does for one request. */
export interface CachePlan {
  key: string;
  scope: string;
  ttlMs: number;
  /** The hit fraction in thousandths (0.1 → 100). */
  hitPerMille: number;
  /** Look for a stored answer (not with `Cache-Control: no-cache` or `no-store`). */
  read: boolean;
  /** Store a fresh answer (not with `Cache-Control: no-store`). */
  write: boolean;
}

/** Who is asking, as the cache needs it. */
export interface CacheCaller {
  keyId: KeyId;
  accountId: AccountId;
  group: string;
}

/** The scope an answer is shared in, as the prefix of its key. */
export function scopeOf(policy: CachePolicyConfig, caller: CacheCaller): string {
  switch (policy.scope) {
    case "account":
      return `account:${caller.accountId}`;
    case "group":
      return `group:${caller.group}`;
    case "global":
      return "global";
  }
}

/** What `Cache-Control` on the request allows: no-cache skips the lookup, no-store skips both. */
function directives(headers: Headers): { read: boolean; write: boolean } {
  const value = headers.get("cache-control");
  if (value === null) return { read: true, write: true };
  const said = value
    .toLowerCase()
    .split(",")
    .map((d) => d.trim());
  if (said.includes("no-store")) return { read: false, write: false };
  return { read: !said.includes("no-cache"), write: true };
}

export class ResponseCache {
  readonly #config: CacheConfig;
  readonly #backend: CacheBackend | undefined;
  readonly #now: () => number;

  constructor(config: CacheConfig, backend: CacheBackend | undefined, now: () => number = Date.now) {
    this.#config = config;
    this.#backend = backend;
    this.#now = now;
  }

  /** Whether any group or key has the cache on. */
  get enabled(): boolean {
    return this.#backend !== undefined;
  }

  /** The plan for a request, or undefined when the cache is off for its key. */
  plan(
    caller: CacheCaller,
    headers: Headers,
    endpoint: string,
    model: ModelId,
    body: Record<string, unknown>,
  ): CachePlan | undefined {
    if (this.#backend === undefined) return undefined;
    const policy = this.#config.keys[caller.keyId] ?? this.#config.groups[caller.group];
    if (policy === undefined) return undefined;
    const scope = scopeOf(policy, caller);
    return {
      key: requestKey(scope, endpoint, model, body),
      scope,
      ttlMs: policy.ttl_seconds * 1000,
      hitPerMille: Math.round(Number(policy.hit_cost_fraction) * 1000),
      ...directives(headers),
    };
  }

  /** The stored answer of a plan that may read, if one is fresh. */
  async get(plan: CachePlan): Promise<CachedAnswer | undefined> {
    if (!plan.read || this.#backend === undefined) return undefined;
    return this.#backend.get(plan.key, this.#now());
  }

  /** Stores a complete answer (never larger than `[cache] max_entry_bytes`); false when not stored. */
  async put(plan: CachePlan, answer: Omit<CachedAnswer, "createdAt" | "expiresAt">): Promise<boolean> {
    if (!plan.write || this.#backend === undefined) return false;
    if (answer.answer.length > this.#config.max_entry_bytes) return false;
    const now = this.#now();
    await this.#backend.put(plan.key, plan.scope, { ...answer, createdAt: now, expiresAt: now + plan.ttlMs });
    return true;
  }

  /** What a hit costs: the plan's fraction of the original cost, rounded down to the nano-USD. */
  hitCost(plan: CachePlan, original: Nanos): Nanos {
    return nanos(Number((BigInt(original) * BigInt(plan.hitPerMille)) / 1000n));
  }

  /** Deletes the stored answers of `scope` (`account:ID`, `group:NAME`, `global`), or all. */
  purge(scope?: string): Promise<number> {
    return this.#backend?.purge(scope) ?? Promise.resolve(0);
  }

  close(): Promise<void> {
    return this.#backend?.close() ?? Promise.resolve();
  }
}

/** The SQLite file of a `sqlite://PATH` store URL; undefined for another store. */
function sqlitePath(url: string): string | undefined {
  return url.startsWith("sqlite://") ? url.slice("sqlite://".length) : undefined;
}

/**
 * Where the configured cache keeps answers: Redis when the nodes share one, else the SQLite store's
 * file (an in-memory table for a PostgreSQL store without Redis: one node only). No backend at all
 * while no group or key has the cache on, unless `evenIfOff` (the CLI purges what an earlier
 * configuration stored).
 */
export async function openCacheBackend(config: Config, evenIfOff = false): Promise<CacheBackend | undefined> {
  const { cache } = config;
  const off = Object.keys(cache.groups).length === 0 && Object.keys(cache.keys).length === 0;
  if (off && !evenIfOff) return undefined;
  // Each backend is imported only when a cache is on (off by default: serve loads neither).
  if (config.redis.url !== undefined)
    return (await import("./redis.ts")).RedisCache.connect(
      config.redis.url,
      config.redis.prefix,
      cache.max_bytes,
    );
  const { SqliteCache } = await import("./sqlite.ts");
  return new SqliteCache(sqlitePath(config.store.url) ?? ":memory:", cache.max_bytes);
}

export async function openResponseCache(config: Config): Promise<ResponseCache> {
  return new ResponseCache(config.cache, await openCacheBackend(config));
}
