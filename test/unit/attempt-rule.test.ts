// The one attempt rule every endpoint family runs (src/upstream/attempt.ts) and the failover's end
// (src/upstream/retry.ts): what each way an attempt ends tells the channel's circuit, that
// retryability is the error table's, and that a failover that gives up throws the last attempt's
// error carrying every attempt.
import { describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../../src/config/load.ts";
import type { ChannelConfig, Config } from "../../src/config/schema.ts";
import { attempt, refusedWith, type Send } from "../../src/upstream/attempt.ts";
import { Channel, type Lease } from "../../src/upstream/channels.ts";
import { failover } from "../../src/upstream/retry.ts";
import type { UpstreamEnv } from "../../src/upstream/text-call.ts";
import { type ErrorKind, GatewayError } from "../../src/wire/errors.ts";
import { tempDir } from "../helpers/gateway.ts";

function config(): Config {
  const dir = tempDir("modelgate-attempt-");
  try {
    const file = join(dir, "config.toml");
    const channel = (name: string) =>
      `[[channels]]\nname = "${name}"\nkind = "openai-chat"\nbase_url = "http://127.0.0.1:9"\nmodels = ["*"]\nretries = 0\n`;
    writeFileSync(
      file,
      `[routing]\nbackoff_base_ms = 1\nbackoff_max_ms = 2\n${channel("a")}${channel("b")}${channel("c")}`,
    );
    return loadConfig({ file, env: {}, flags: {} });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const loaded = config();
const env: UpstreamEnv = {
  simSeed: 1,
  simTiming: { ttftMs: 0, tokensPerSecond: 0 },
  timeoutMs: 10_000,
  routing: loaded.routing,
};

/** A lease on a fresh channel `a` that records how it was released. */
function lease(): { lease: Lease; released: string[] } {
  const released: string[] = [];
  const channel = new Channel(loaded.channels[0] as ChannelConfig);
  return { lease: { channel, credential: undefined, release: (o) => released.push(o) }, released };
}

const refused =
  (error: GatewayError, status: number): Send<never> =>
  async () => ({ ok: false, error, status });

describe("one attempt rule", () => {
  const cases: [string, Send<never>, string, ErrorKind, boolean][] = [
    [
      "a 429",
      refused(new GatewayError("rate_limited", "slow down", { retryAfterSeconds: 2 }), 429),
      "neutral",
      "rate_limited",
      true,
    ],
    ["a 5xx", refused(new GatewayError("upstream_failed", "down"), 500), "failure", "upstream_failed", true],
    [
      "the request's fault",
      refused(new GatewayError("invalid_request", "bad"), 400),
      "neutral",
      "invalid_request",
      false,
    ],
    [
      "a thrown refusal (images)",
      async () => {
        throw new GatewayError("invalid_request", "bad prompt");
      },
      "neutral",
      "invalid_request",
      false,
    ],
    [
      "an answer broken off",
      async () => {
        throw new Error("socket hang up");
      },
      "failure",
      "upstream_failed",
      true,
    ],
  ];
  for (const [what, send, outcome, kind, retryable] of cases) {
    test(`${what}: the lease is released ${outcome}; ${kind}, retryable ${retryable} by the table`, async () => {
      const { lease: l, released } = lease();
      const result = await attempt(l, env, new AbortController().signal, send);
      expect(result.ok).toBe(false);
      if (result.ok) return;
      expect(released).toEqual([outcome]);
      expect(result.failure.error.kind).toBe(kind);
      expect(result.failure.error.retryable).toBe(retryable);
    });
  }

  test("a 429's Retry-After is kept; a refused credential with no other is not retried on the same channel", async () => {
    const slow = await attempt(
      lease().lease,
      env,
      new AbortController().signal,
      cases[0]?.[1] as Send<never>,
    );
    expect(slow.ok ? undefined : slow.failure.retryAfterMs).toBe(2000);
    const auth = refused(
      new GatewayError("upstream_failed", "refused", { code: "upstream_auth_failed" }),
      401,
    );
    const result = await attempt(lease().lease, env, new AbortController().signal, auth);
    expect(result.ok ? undefined : [result.failure.sameChannel, result.failure.status]).toEqual([false, 401]);
  });

  test("an adapter's thrown refusal keeps its upstream status", async () => {
    const send: Send<never> = async () => {
      throw refusedWith(new GatewayError("upstream_failed", "down"), 503);
    };
    const result = await attempt(lease().lease, env, new AbortController().signal, send);
    expect(result.ok ? undefined : result.failure.status).toBe(503);
  });

  test("the client went away: released neutral, the abort thrown on", async () => {
    const { lease: l, released } = lease();
    const client = new AbortController();
    const send: Send<never> = async () => {
      client.abort();
      throw new DOMException("gone", "AbortError");
    };
    await expect(attempt(l, env, client.signal, send)).rejects.toThrow("gone");
    expect(released).toEqual(["neutral"]);
  });
});

describe("the failover's end", () => {
  test("three failing channels: the last error (its kind and status), carrying all three attempts", async () => {
    const channels = loaded.channels.map((c: ChannelConfig) => new Channel(c));
    const kinds: ErrorKind[] = ["upstream_failed", "rate_limited", "upstream_failed"];
    let n = 0;
    const tried: string[] = [];
    const thrown = await failover(
      channels,
      (l) =>
        attempt(
          l,
          env,
          new AbortController().signal,
          refused(new GatewayError(kinds[n] ?? "internal", `no ${n++}`), n === 2 ? 429 : 500),
        ),
      { policy: loaded.routing, tried, signal: new AbortController().signal, replayable: true },
    ).catch((e: unknown) => e);
    expect(thrown).toBeInstanceOf(GatewayError);
    const error = thrown as GatewayError;
    expect(tried).toEqual(["a", "b", "c"]);
    expect([error.kind, error.status]).toEqual(["upstream_failed", 502]);
    expect(error.attempts.map((a) => [a.channel, a.upstream, a.status, a.kind])).toEqual([
      ["a", "openai-chat", 500, "upstream_failed"],
      ["b", "openai-chat", 429, "rate_limited"],
      ["c", "openai-chat", 500, "upstream_failed"],
    ]);
    expect(error.message).toStartWith('no 2 All 3 attempts failed: 1. channel "a" (openai-chat) 500');
  });

  test("one attempt: the error as it was, carrying that attempt", async () => {
    const [only] = loaded.channels.map((c: ChannelConfig) => new Channel(c));
    const thrown = await failover(
      only === undefined ? [] : [only],
      (l) =>
        attempt(
          l,
          env,
          new AbortController().signal,
          refused(new GatewayError("invalid_request", "fix it"), 400),
        ),
      { policy: loaded.routing, tried: [], signal: new AbortController().signal, replayable: true },
    ).catch((e: unknown) => e);
    expect((thrown as GatewayError).message).toBe("fix it");
    expect((thrown as GatewayError).attempts).toHaveLength(1);
  });
});
