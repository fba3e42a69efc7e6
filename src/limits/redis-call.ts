// One Redis call's deadline and what its failure means, for the Redis limiter (redis.ts): a call
// Redis has not answered in time, a connection error, or one of Redis's "not now" answers is
// LimiterUnavailableError (the gateway answers 503 limiter_unavailable); anything else is a bug
// and stays an error. The deadline measures Redis, not this node's event loop. Also: reading a
// script's integer reply by name, and a Redis URL without its password for messages.
import { LimiterUnavailableError } from "./limiter.ts";

/** The default deadline of one Redis call (`redis.timeout_ms`), inside the 250 ms the failure policy allows. */
export const REDIS_TIMEOUT_MS = 200;
/** A deadline timer firing this much later than due means the event loop, not Redis, was busy. */
const LAG_TOLERANCE_MS = 20;
/** Further windows a call gets when its timer fired late (each again only if that one was late too). */
const LATE_WINDOWS = 4;
/**
 * Redis's answers that mean "not now" rather than a bug: loading a snapshot, out of memory under
 * noeviction, a read-only replica, a script running too long, no reachable master or slot.
 */
const UNAVAILABLE_ANSWER = /^(LOADING|OOM|READONLY|BUSY|MASTERDOWN|TRYAGAIN|CLUSTERDOWN)\b/;

export class RedisCalls {
  readonly #url: string;
  readonly #timeoutMs: number;
  #late = 0;

  constructor(url: string, timeoutMs: number) {
    this.#url = url;
    this.#timeoutMs = timeoutMs;
  }

  /**
   * Races `call` against the deadline. The deadline measures Redis, not this node's event loop: a
   * timer that fires late (the loop was busy, e.g. a long synchronous task or a CPU-starved host)
   * first lets the loop read what arrived meanwhile (setImmediate runs after the I/O poll), and if
   * the answer is still missing grants a further window, up to LATE_WINDOWS times. On a healthy
   * loop the timer fires on time and a hung Redis is refused at `timeoutMs`.
   */
  async deadline<T>(call: Promise<T>, what: string): Promise<T> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let turn: ReturnType<typeof setImmediate> | undefined;
    const late = new Promise<never>((_, reject) => {
      const arm = (ms: number, windows: number): void => {
        const due = performance.now() + ms;
        timer = setTimeout(() => {
          const lagMs = performance.now() - due;
          turn = setImmediate(() => {
            if (lagMs > LAG_TOLERANCE_MS && windows < LATE_WINDOWS) {
              this.#late++;
              arm(Math.max(LAG_TOLERANCE_MS, Math.min(this.#timeoutMs, lagMs)), windows + 1);
              return;
            }
            reject(
              new LimiterUnavailableError(
                `Redis at ${redacted(this.#url)} did not answer ${what} within ${this.#timeoutMs} ms`,
              ),
            );
          });
        }, ms);
      };
      arm(this.#timeoutMs, 0);
    });
    try {
      return await Promise.race([call, late]);
    } catch (error) {
      if (error instanceof LimiterUnavailableError) throw error;
      if (error instanceof Error && isConnectionError(error)) {
        throw new LimiterUnavailableError(`Redis at ${redacted(this.#url)} is unreachable: ${error.message}`);
      }
      if (error instanceof Error && UNAVAILABLE_ANSWER.test(error.message)) {
        throw new LimiterUnavailableError(
          `Redis at ${redacted(this.#url)} cannot serve now: ${error.message}`,
        );
      }
      throw error;
    } finally {
      clearTimeout(timer);
      if (turn) clearImmediate(turn);
    }
  }

  /** How often a deadline timer fired late and a call was given a further window. */
  get lateWindows(): number {
    return this.#late;
  }
}

/** A script reply's integers by name; any other shape is a bug in the script, reported as such. */
export function fields<const K extends readonly string[]>(
  reply: unknown,
  names: K,
): Record<K[number], number> {
  if (!Array.isArray(reply) || reply.length !== names.length || !reply.every((v) => typeof v === "number")) {
    throw new Error(
      `redis limiter: expected ${names.length} integers from a script, got ${JSON.stringify(reply)}`,
    );
  }
  const out: Record<string, number> = {};
  names.forEach((name, i) => {
    out[name] = reply[i] ?? 0;
  });
  return out as Record<K[number], number>;
}

function isConnectionError(error: Error): boolean {
  const code = (error as Error & { code?: unknown }).code;
  return typeof code === "string" && code.startsWith("ERR_REDIS_") && code !== "ERR_REDIS_SERVER_ERROR";
}

/** The URL without its password, for messages and logs. */
export function redacted(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(unparsable url)";
  }
}
