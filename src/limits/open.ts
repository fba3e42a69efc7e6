// Chooses the limiter from the configuration: Redis when redis.url is set (several nodes share
// limits), otherwise none, and the meter keeps its in-memory one.

import { log } from "../base/log.ts";
import { ConfigError } from "../config/load.ts";
import type { Config } from "../config/schema.ts";
import type { Limiter } from "./limiter.ts";
import { calendarOf } from "./periods.ts";

/** The Redis limiter of `config.redis`, connected; undefined without a Redis URL. */
export async function openLimiter(config: Config): Promise<Limiter | undefined> {
  const { url, prefix, lease_seconds, timeout_ms } = config.redis;
  if (url === undefined) return undefined;
  // Imported only with a Redis URL: a single node never evaluates the Redis engine and its scripts.
  const { RedisLimiter } = await import("./redis.ts");
  try {
    const limiter = await RedisLimiter.connect({
      url,
      prefix,
      leaseMs: lease_seconds * 1000,
      timeoutMs: timeout_ms,
      dayOffsetMinutes: config.billing.day_utc_offset_minutes,
      calendar: calendarOf(config.billing.budgets),
      localClock: skewedClock(),
    });
    log("info", "limiter on redis", { prefix, lease_seconds, timeout_ms });
    return limiter;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new ConfigError(
      `redis.url: cannot reach the shared limiter (${reason}); start Redis or fix --redis-url / MODELGATE_REDIS_URL`,
    );
  }
}

/**
 * This node's clock, shifted by MODELGATE_TEST_CLOCK_OFFSET_MS when a test sets it (a node whose
 * clock runs ahead or behind): the shared limiter's clock must make the shift change nothing.
 */
function skewedClock(): () => number {
  const offset = Number(process.env.MODELGATE_TEST_CLOCK_OFFSET_MS ?? 0);
  return Number.isFinite(offset) && offset !== 0 ? () => Date.now() + offset : Date.now;
}
