// The response cache of a cluster, in the nodes' shared Redis (`[redis] url`, its prefix): each
// answer a string that expires by itself (PX), an index of the stored keys by creation time and a
// hash of their sizes, all in one hash slot. A put and its evictions are one script, so nodes
// storing at once keep the total under `[cache] max_bytes`, the oldest going first.
import { RedisClient } from "bun";
import { log } from "../base/log.ts";
import { type CacheBackend, type CachedAnswer, readStoredAnswer } from "./entry.ts";

/**
 * KEYS: entry, index, sizes. ARGV: value, ttl ms, created at, max bytes, member, entry key prefix,
 * size (the answer's, as the SQLite cache counts it).
 */
const PUT = `
local size = tonumber(ARGV[7])
local old = redis.call('HGET', KEYS[3], ARGV[5])
if old then redis.call('HINCRBY', KEYS[3], '#total', -tonumber(old)) end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[5])
redis.call('HSET', KEYS[3], ARGV[5], size)
local total = redis.call('HINCRBY', KEYS[3], '#total', size)
local evicted = 0
while total > tonumber(ARGV[4]) do
  local oldest = redis.call('ZPOPMIN', KEYS[2])
  if #oldest == 0 then break end
  local member = oldest[1]
  local bytes = tonumber(redis.call('HGET', KEYS[3], member) or '0')
  redis.call('HDEL', KEYS[3], member)
  redis.call('DEL', ARGV[6] .. member)
  total = redis.call('HINCRBY', KEYS[3], '#total', -bytes)
  evicted = evicted + 1
end
return evicted
`;

/** KEYS: index, sizes. ARGV: member prefix ('' for all), entry key prefix. */
const PURGE = `
local members = redis.call('ZRANGE', KEYS[1], 0, -1)
local purged = 0
for _, member in ipairs(members) do
  if ARGV[1] == '' or string.sub(member, 1, string.len(ARGV[1])) == ARGV[1] then
    local bytes = tonumber(redis.call('HGET', KEYS[2], member) or '0')
    redis.call('ZREM', KEYS[1], member)
    redis.call('HDEL', KEYS[2], member)
    redis.call('HINCRBY', KEYS[2], '#total', -bytes)
    purged = purged + redis.call('DEL', ARGV[2] .. member)
  end
end
return purged
`;

export class RedisCache implements CacheBackend {
  readonly #client: RedisClient;
  readonly #prefix: string;
  readonly #maxBytes: number;

  private constructor(client: RedisClient, prefix: string, maxBytes: number) {
    this.#client = client;
    // One hash slot for the whole cache: the scripts touch entries, index and sizes together.
    this.#prefix = `${prefix}:{cache}:`;
    this.#maxBytes = maxBytes;
  }

  static async connect(url: string, prefix: string, maxBytes: number): Promise<RedisCache> {
    const client = new RedisClient(url, {
      enableOfflineQueue: false,
      autoReconnect: true,
      connectionTimeout: 1000,
    });
    await client.connect();
    return new RedisCache(client, prefix, maxBytes);
  }

  async get(key: string, now: number): Promise<CachedAnswer | undefined> {
    const text = await this.#client.get(`${this.#prefix}e:${key}`);
    if (text === null) return undefined;
    const read = readStoredAnswer(text);
    if ("problem" in read) {
      // A miss: the answer is asked upstream again and its put replaces this value.
      log("warn", "response cache: an unreadable stored answer was taken as a miss", {
        key,
        problem: read.problem,
      });
      return undefined;
    }
    return read.answer.expiresAt <= now ? undefined : read.answer;
  }

  async put(key: string, _scope: string, entry: CachedAnswer): Promise<void> {
    const ttl = Math.max(1, entry.expiresAt - entry.createdAt);
    const p = this.#prefix;
    await this.#client.send("EVAL", [
      PUT,
      "3",
      `${p}e:${key}`,
      `${p}index`,
      `${p}sizes`,
      JSON.stringify(entry),
      String(ttl),
      String(entry.createdAt),
      String(this.#maxBytes),
      key,
      `${p}e:`,
      String(entry.answer.length),
    ]);
  }

  /** Keys begin with their scope (`account:7:…`), so a scope's answers are those its prefix names. */
  async purge(scope?: string): Promise<number> {
    const p = this.#prefix;
    const purged = await this.#client.send("EVAL", [
      PURGE,
      "2",
      `${p}index`,
      `${p}sizes`,
      scope === undefined ? "" : `${scope}:`,
      `${p}e:`,
    ]);
    return Number(purged);
  }

  async close(): Promise<void> {
    this.#client.close();
  }
}
