// Shared set-up for the Redis limiter tests: limiters on the local Redis (127.0.0.1:6379) under a
// prefix unique to each test and removed after it (SCAN + DEL), and a private redis-server on a
// spare port for the tests that stop Redis (the shared one on 6379 is never stopped); and the
// admission request the limiter tests start from; a proxy that makes Redis answer slowly.
import { RedisClient } from "bun";
import { nanos } from "../../src/base/money.ts";
import type { AcquireRequest } from "../../src/limits/limiter.ts";
import { RedisLimiter, type RedisLimiterOptions } from "../../src/limits/redis.ts";
import { acct, kid } from "../helpers/ids.ts";

export const REDIS_URL = process.env.MODELGATE_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

/** An admission of key k1 of account 1 with no limits and nothing reserved, unless `partial` says otherwise. */
export function limitRequest(now: number, partial: Partial<AcquireRequest>): AcquireRequest {
  return {
    keyId: kid("k1"),
    accountId: acct(1),
    rpm: null,
    concurrency: null,
    dailyCap: null,
    reserve: nanos(0),
    now,
    ...partial,
  };
}

/** A fresh prefix for one test. */
export function testPrefix(): string {
  return `mgtest-${crypto.randomUUID()}`;
}

/** Deletes every key under the prefix. */
export async function dropPrefix(prefix: string, url = REDIS_URL): Promise<number> {
  const client = new RedisClient(url);
  let dropped = 0;
  try {
    let cursor = "0";
    do {
      const reply = await client.send("SCAN", [cursor, "MATCH", `${prefix}:*`, "COUNT", "500"]);
      if (!Array.isArray(reply) || reply.length !== 2)
        throw new Error(`unexpected SCAN reply ${JSON.stringify(reply)}`);
      cursor = String(reply[0]);
      const keys = (reply[1] as unknown[]).map(String);
      if (keys.length > 0) dropped += Number(await client.send("DEL", keys));
    } while (cursor !== "0");
  } finally {
    client.close();
  }
  return dropped;
}

/** Keys under the prefix right now. */
export async function keysUnder(prefix: string, url = REDIS_URL): Promise<string[]> {
  const client = new RedisClient(url);
  try {
    const keys = await client.send("KEYS", [`${prefix}:*`]);
    return (keys as unknown[]).map(String).sort();
  } finally {
    client.close();
  }
}

/**
 * Limiters made for one test, sharing its prefix (as nodes of one cluster), each with its own
 * connection; `cleanup()` closes them and drops the prefix.
 */
export class RedisLimiters {
  readonly prefix = testPrefix();
  readonly #made: RedisLimiter[] = [];

  async make(options: Partial<RedisLimiterOptions> = {}): Promise<RedisLimiter> {
    const limiter = await RedisLimiter.connect({ url: REDIS_URL, prefix: this.prefix, ...options });
    this.#made.push(limiter);
    return limiter;
  }

  async cleanup(): Promise<void> {
    await Promise.all(this.#made.map((limiter) => limiter.close()));
    this.#made.length = 0;
    await dropPrefix(this.prefix);
  }
}

/**
 * A private redis-server on a free port, for tests that stop or restart Redis. Without a `dir` it
 * keeps nothing; with one, SAVE writes `dump.rdb` there and a restart loads it (an older snapshot).
 */
export class PrivateRedis {
  #proc: ReturnType<typeof Bun.spawn> | undefined;

  private constructor(
    readonly port: number,
    readonly dir: string | undefined,
  ) {}

  static async start(port?: number, options: { dir?: string } = {}): Promise<PrivateRedis> {
    const redis = new PrivateRedis(port ?? (await freePort()), options.dir);
    await redis.restart();
    return redis;
  }

  /** Sends one command on a connection of its own (FLUSHALL, SAVE, ...). */
  async send(command: string, args: string[] = []): Promise<unknown> {
    const client = new RedisClient(this.url);
    try {
      return await client.send(command, args);
    } finally {
      client.close();
    }
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts the server (empty, or from the last SAVE in `dir`) and waits until it answers PING. */
  async restart(): Promise<void> {
    if (this.#proc) throw new Error("the private redis-server is already running");
    const persistence = this.dir === undefined ? [] : ["--dir", this.dir, "--dbfilename", "dump.rdb"];
    this.#proc = Bun.spawn(
      [
        "redis-server",
        "--port",
        String(this.port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        ...persistence,
      ],
      { stdout: "ignore", stderr: "ignore" },
    );
    for (let i = 0; i < 100; i++) {
      const client = new RedisClient(this.url, { autoReconnect: false, connectionTimeout: 200 });
      try {
        if ((await client.send("PING", [])) === "PONG") return;
      } catch {
        await Bun.sleep(50);
      } finally {
        client.close();
      }
    }
    throw new Error(`redis-server on port ${this.port} did not answer PING within 5 s`);
  }

  /** Sends a signal (SIGSTOP hangs the server without closing its connections; SIGCONT resumes it). */
  signal(signal: "SIGSTOP" | "SIGCONT"): void {
    if (!this.#proc) throw new Error("the private redis-server is not running");
    this.#proc.kill(signal);
  }

  /** Kills the server (SIGKILL: no goodbye to its clients) and waits until it is gone. */
  async kill(): Promise<void> {
    const proc = this.#proc;
    this.#proc = undefined;
    if (!proc) return;
    proc.kill("SIGKILL");
    await proc.exited;
  }
}

async function freePort(): Promise<number> {
  const server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = server.port;
  server.stop(true);
  return port;
}

/**
 * A TCP proxy in front of Redis that holds every reply for `delayMs` (set it at any time). Replies
 * keep their order; requests pass at once, so Redis runs a command before the client sees it done.
 */
export class SlowRedisProxy {
  delayMs = 0;
  readonly #server: Bun.TCPSocketListener<ProxyLink>;

  private constructor(targetPort: number) {
    const proxy = this;
    this.#server = Bun.listen<ProxyLink>({
      hostname: "127.0.0.1",
      port: 0,
      socket: {
        async open(client) {
          const link: ProxyLink = { upstream: undefined, pending: [], replies: [], timer: undefined };
          client.data = link;
          link.upstream = await Bun.connect({
            hostname: "127.0.0.1",
            port: targetPort,
            socket: {
              data(_, chunk) {
                link.replies.push({ due: performance.now() + proxy.delayMs, chunk: Buffer.from(chunk) });
                proxy.#pump(client, link);
              },
              close() {
                client.end();
              },
            },
          });
          for (const chunk of link.pending) link.upstream.write(chunk);
          link.pending.length = 0;
        },
        data(client, chunk) {
          const link = client.data;
          if (link.upstream) link.upstream.write(chunk);
          else link.pending.push(Buffer.from(chunk));
        },
        close(client) {
          clearTimeout(client.data.timer);
          client.data.upstream?.end();
        },
      },
    });
  }

  static start(targetUrl: string): SlowRedisProxy {
    return new SlowRedisProxy(Number(new URL(targetUrl).port));
  }

  get url(): string {
    return `redis://127.0.0.1:${this.#server.port}`;
  }

  stop(): void {
    this.#server.stop(true);
  }

  /** Writes the replies that are due, in order, and waits for the next one. */
  #pump(client: Bun.Socket<ProxyLink>, link: ProxyLink): void {
    clearTimeout(link.timer);
    let next = link.replies[0];
    while (next && next.due <= performance.now()) {
      client.write(next.chunk);
      link.replies.shift();
      next = link.replies[0];
    }
    if (next) link.timer = setTimeout(() => this.#pump(client, link), next.due - performance.now());
  }
}

interface ProxyLink {
  upstream: Bun.Socket | undefined;
  /** Requests that arrived before the connection to Redis was open. */
  pending: Buffer[];
  /** Replies held back, oldest first. */
  replies: { due: number; chunk: Buffer }[];
  timer: ReturnType<typeof setTimeout> | undefined;
}
