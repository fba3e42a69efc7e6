// The exact response cache (`[cache]`) through the compiled binary, in every text protocol, JSON
// and SSE: a miss asks upstream and stores the whole answer; the same request again (in either
// mode, whatever its `user`) is a hit answered from the cache in the client's protocol and mode —
// a stream replayed event by event — marked in its usage record and billed at the configured
// fraction; Cache-Control no-cache / no-store bypass it; truncated answers and errors are never
// stored; answers are scoped to the account; the admin API and the CLI purge them; hits and misses
// are counted on /metrics; a bad [cache] stops the gateway at start naming the path.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import {
  createKey,
  type RunningGateway,
  runCli,
  serveRefuses,
  startGateway,
  tempDir,
} from "../helpers/gateway.ts";
import { payloads, readSse } from "../helpers/sse.ts";
import { type StoredUsage, waitForUsage } from "../helpers/usage-records.ts";
import { keyAccepted, waitFor } from "../helpers/wait.ts";
import { dropPrefix, keysUnder, REDIS_URL, testPrefix } from "../unit/limits-redis-fixture.ts";

let gw: RunningGateway;
let adminToken: string;
let otherKey: string;

const CONFIG = `
[sim]
seed = 5

[cache.groups.default]
ttl_seconds = 600
hit_cost_fraction = "0.5"
`;

type Path = "/v1/responses" | "/v1/chat/completions" | "/v1/messages";
const PATHS: Path[] = ["/v1/responses", "/v1/chat/completions", "/v1/messages"];

function bodyFor(path: Path, prompt: string, stream: boolean, extra: Record<string, unknown> = {}) {
  switch (path) {
    case "/v1/responses":
      return { model: "modelx-5.5", input: prompt, max_output_tokens: 200, stream, ...extra };
    case "/v1/chat/completions":
      return {
        model: "modelx-5.4",
        messages: [{ role: "user", content: prompt }],
        max_tokens: 200,
        stream,
        ...(stream ? { stream_options: { include_usage: true } } : {}),
        ...extra,
      };
    case "/v1/messages":
      return {
        model: "modelz-sonnet-4-6",
        max_tokens: 200,
        messages: [{ role: "user", content: prompt }],
        stream,
        ...extra,
      };
  }
}

interface Answered {
  status: number;
  cache: string | null;
  text: string;
  record: StoredUsage;
}

/** The answer's text, from its JSON or from its events. */
async function textOf(path: Path, response: Response, stream: boolean): Promise<string> {
  if (!stream) {
    const json = (await response.json()) as Record<string, never>;
    if (path === "/v1/responses")
      return (json.output as unknown as { content?: { text?: string }[] }[])
        .flatMap((o) => o.content ?? [])
        .map((c) => c.text ?? "")
        .join("");
    if (path === "/v1/chat/completions")
      return (json.choices as unknown as { message: { content: string } }[])[0]?.message.content ?? "";
    return (json.content as unknown as { text?: string }[]).map((c) => c.text ?? "").join("");
  }
  let text = "";
  for (const event of payloads((await readSse(response)).events)) {
    if (path === "/v1/responses" && event.type === "response.output_text.delta") text += String(event.delta);
    if (path === "/v1/chat/completions") {
      const choice = (event.choices as { delta?: { content?: string } }[] | undefined)?.[0];
      text += choice?.delta?.content ?? "";
    }
    if (path === "/v1/messages" && event.type === "content_block_delta") {
      text += (event.delta as { text?: string }).text ?? "";
    }
  }
  return text;
}

/** How many answers the gateway has stored so far (modelgate_response_cache_total{result="stored"}). */
async function storedCount(): Promise<number> {
  const text = await (await fetch(`${gw.url}/metrics`)).text();
  return Number(/^modelgate_response_cache_total\{result="stored"\} (\d+)$/m.exec(text)?.[1] ?? 0);
}

async function ask(
  path: Path,
  prompt: string,
  stream: boolean,
  options: {
    extra?: Record<string, unknown>;
    headers?: Record<string, string>;
    key?: string;
    /** False for an answer the cache must not keep (cut short): nothing to wait for. */
    kept?: boolean;
  } = {},
): Promise<Answered> {
  const key = options.key ?? gw.key ?? "";
  const auth: Record<string, string> =
    path === "/v1/messages"
      ? { "x-api-key": key, "anthropic-version": "2023-06-01" }
      : { authorization: `Bearer ${key}` };
  const storedBefore = await storedCount();
  const response = await fetch(`${gw.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...auth, ...options.headers },
    body: JSON.stringify(bodyFor(path, prompt, stream, options.extra)),
  });
  const cache = response.headers.get("x-modelgate-cache");
  const requestId = response.headers.get("x-request-id") ?? "";
  const status = response.status;
  const text = status === 200 ? await textOf(path, response, stream) : await response.text();
  // A fresh answer is stored in the background after it was sent: wait for it before going on.
  const keeps =
    status === 200 &&
    (cache === "miss" || cache === "bypass") &&
    options.headers?.["cache-control"] !== "no-store" &&
    options.kept !== false;
  if (keeps) await waitFor("the answer stored", async () => (await storedCount()) > storedBefore);
  return { status, cache, text, record: await waitForUsage(gw, requestId) };
}

beforeAll(async () => {
  gw = await startGateway({ config: CONFIG });
  adminToken = /\b(mga-[A-Za-z0-9_-]+)/.exec(gw.logs())?.[1] ?? "";
  expect((await gw.cli(["accounts", "create", "other", "--balance", "5"])).code).toBe(0);
  otherKey = (await createKey(gw, ["--account", "other", "--name", "other"])).secret;
  await keyAccepted(gw.url, otherKey);
}, 60_000);

afterAll(async () => {
  await gw.dispose();
}, 30_000);

describe("a hit answers in the client's protocol and mode, marked and billed at the fraction", () => {
  for (const path of PATHS) {
    for (const firstStream of [false, true]) {
      test(`${path}: a ${firstStream ? "stream" : "JSON"} miss, then hits in both modes`, async () => {
        const prompt = `Tell me about caches, ${path} ${firstStream}.`;
        const miss = await ask(path, prompt, firstStream);
        expect([miss.status, miss.cache, miss.record.cache_hit]).toEqual([200, "miss", 0]);
        expect(miss.text.length).toBeGreaterThan(0);
        expect(miss.record.cost_nanos).toBeGreaterThan(0);
        for (const stream of [firstStream, !firstStream]) {
          const hit = await ask(path, prompt, stream, { extra: { user: "someone-else" } });
          expect([hit.status, hit.cache, hit.record.cache_hit]).toEqual([200, "hit", 1]);
          expect(hit.text).toBe(miss.text);
          expect(hit.record.channels).toBe("");
          expect(hit.record.cost_nanos).toBe(Math.floor(miss.record.cost_nanos / 2));
          expect([hit.record.input_tokens, hit.record.output_tokens]).toEqual([
            miss.record.input_tokens,
            miss.record.output_tokens,
          ]);
        }
      });
    }
  }
});

describe("what is and is not served or stored", () => {
  test("an output-changing parameter is another request; another account does not share answers", async () => {
    const prompt = "Parameters matter.";
    expect((await ask("/v1/chat/completions", prompt, false)).cache).toBe("miss");
    expect((await ask("/v1/chat/completions", prompt, false, { extra: { temperature: 0.2 } })).cache).toBe(
      "miss",
    );
    expect((await ask("/v1/chat/completions", prompt, false, { key: otherKey })).cache).toBe("miss");
    expect((await ask("/v1/chat/completions", prompt, false)).cache).toBe("hit");
  });

  test("Cache-Control: no-cache asks upstream (and refreshes); no-store neither reads nor stores", async () => {
    const prompt = "Bypass me.";
    expect((await ask("/v1/messages", prompt, false)).cache).toBe("miss");
    const noCache = await ask("/v1/messages", prompt, false, { headers: { "cache-control": "no-cache" } });
    expect([noCache.cache, noCache.record.cache_hit]).toEqual(["bypass", 0]);
    const fresh = "Never kept.";
    expect((await ask("/v1/messages", fresh, true, { headers: { "cache-control": "no-store" } })).cache).toBe(
      "bypass",
    );
    expect((await ask("/v1/messages", fresh, true)).cache).toBe("miss");
  });

  test("several choices (Chat n) are not cached", async () => {
    for (let i = 0; i < 2; i++) {
      const answered = await ask("/v1/chat/completions", "Two answers please.", false, { extra: { n: 2 } });
      expect([answered.status, answered.cache, answered.record.cache_hit]).toEqual([200, null, 0]);
    }
  });

  test("a truncated answer and an error are never stored", async () => {
    const storedBefore = await storedCount();
    for (const path of PATHS) {
      const cut = {
        extra: path === "/v1/responses" ? { max_output_tokens: 16 } : { max_tokens: 3 },
        kept: false,
      };
      expect((await ask(path, "A long story please, with many words in it.", false, cut)).cache).toBe("miss");
      expect((await ask(path, "A long story please, with many words in it.", true, cut)).cache).toBe("miss");
    }
    for (const stream of [false, true]) {
      const failed = await ask("/v1/chat/completions", "Fail sim:error=400", stream);
      expect(failed.status).toBe(400);
    }
    const again = await ask("/v1/chat/completions", "Fail sim:error=400", false);
    expect(again.status).toBe(400);
    expect(again.record.cache_hit).toBe(0);
    // One whole answer after them: once it is stored, so would any of theirs be (stores run in
    // order); it is the only one.
    await ask("/v1/chat/completions", "A whole answer after the cut ones.", false);
    expect((await storedCount()) - storedBefore).toBe(1);
  });
});

describe("purge and metrics", () => {
  test("the admin API purges one account's answers, the CLI all of them", async () => {
    const prompt = "Purge me.";
    await ask("/v1/responses", prompt, false);
    await ask("/v1/responses", prompt, false, { key: otherKey });
    const before = await ask("/v1/responses", prompt, false, { key: otherKey });
    expect([before.status, before.cache, before.text]).toEqual([200, "hit", expect.any(String)]);
    const purge = (query: string) =>
      fetch(`${gw.url}/admin/v1/cache/purge${query}`, {
        method: "POST",
        headers: { authorization: `Bearer ${adminToken}` },
      });
    const one = await purge("?account=other");
    expect(one.status).toBe(200);
    expect(((await one.json()) as { purged: number }).purged).toBeGreaterThanOrEqual(1);
    expect((await ask("/v1/responses", prompt, false, { key: otherKey })).cache).toBe("miss");
    expect((await ask("/v1/responses", prompt, false)).cache).toBe("hit");
    expect((await purge("?account=nobody")).status).toBe(404);
    const cli = await gw.cli(["cache", "purge", "--json"]);
    expect(cli.code).toBe(0);
    expect((JSON.parse(cli.stdout) as { purged: number }).purged).toBeGreaterThanOrEqual(2);
    expect((await ask("/v1/responses", prompt, false)).cache).toBe("miss");
  });

  test("/metrics counts hits, misses, bypasses and stored answers", async () => {
    const text = await (await fetch(`${gw.url}/metrics`)).text();
    for (const result of ["hit", "miss", "bypass", "stored"]) {
      const line = new RegExp(`^modelgate_response_cache_total\\{result="${result}"\\} (\\d+)$`, "m").exec(
        text,
      );
      expect(Number(line?.[1])).toBeGreaterThan(0);
    }
  });
});

describe("bad [cache] settings stop the gateway at start, naming the path", () => {
  const cases: [string, string, string][] = [
    [
      "a TTL of 0",
      `[cache.groups.default]\nttl_seconds = 0\n`,
      "cache.groups.default.ttl_seconds: must be at least 1 second",
    ],
    [
      "a negative fraction",
      `[cache.keys.key_1]\nttl_seconds = 60\nhit_cost_fraction = "-0.5"\n`,
      "cache.keys.key_1.hit_cost_fraction: expected a fraction from 0 to 1",
    ],
    [
      "an unknown scope",
      `[cache.groups.g]\nttl_seconds = 60\nscope = "world"\n`,
      "cache.groups.g.scope: expected account, group or global",
    ],
  ];
  for (const [name, toml, message] of cases) {
    test(name, async () => {
      const result = await serveRefuses(toml);
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain(message);
    });
  }
});

describe("on Redis (the cache of a cluster)", () => {
  test("answers live in Redis under the prefix: a restarted node still hits, and the CLI purges there", async () => {
    const dir = tempDir();
    const prefix = testPrefix();
    const args = ["--redis-url", REDIS_URL, "--redis-prefix", prefix];
    const node = () => startGateway({ dir, config: CONFIG, args });
    let first: RunningGateway | undefined;
    let second: RunningGateway | undefined;
    try {
      first = await node();
      const key = first.key ?? "";
      const ask = async (running: RunningGateway, stream: boolean) => {
        const response = await fetch(`${running.url}/v1/chat/completions`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
          body: JSON.stringify(bodyFor("/v1/chat/completions", "Redis keeps me.", stream)),
        });
        expect(response.status).toBe(200);
        await response.arrayBuffer();
        return response.headers.get("x-modelgate-cache");
      };
      expect(await ask(first, false)).toBe("miss");
      // Stored in the background (the client never waits on Redis): the next asks hit once it is.
      const running = first;
      await waitFor("the answer stored in Redis", async () => (await ask(running, true)) === "hit");
      expect((await keysUnder(prefix)).some((k) => k.startsWith(`${prefix}:{cache}:e:account:`))).toBe(true);
      await first.stop();
      second = await node();
      expect(await ask(second, true)).toBe("hit");
      const purged = await runCli(
        ["cache", "purge", "--db", second.dbUrl, "--config", `${dir}/modelgate.toml`],
        {
          MODELGATE_REDIS_URL: REDIS_URL,
          MODELGATE_REDIS_PREFIX: prefix,
        },
      );
      expect([purged.code, purged.stdout.trim()]).toEqual([0, "purged 1 stored answer"]);
      expect(await ask(second, false)).toBe("miss");
    } finally {
      await second?.stop();
      await first?.stop();
      await dropPrefix(prefix);
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
