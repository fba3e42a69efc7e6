// GET /metrics and the overhead figure, through the compiled binary: the exposition parses, counts
// every answered request by route and status, and its overhead histogram counts the same requests;
// with `[metrics] overhead_header = true` every answer carries x-modelgate-overhead-us, which
// excludes the time spent waiting on the upstream (here an upstream that waits 300 ms).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type RunningGateway, startGateway } from "../helpers/gateway.ts";

const UPSTREAM_DELAY_MS = 300;
const COMPLETION = {
  id: "chatcmpl-metrics",
  object: "chat.completion",
  created: 1_767_225_600,
  model: "modelx-5.5",
  choices: [
    { index: 0, message: { role: "assistant", content: "ok" }, logprobs: null, finish_reason: "stop" },
  ],
  usage: { prompt_tokens: 9, completion_tokens: 1, total_tokens: 10 },
};

let upstream: ReturnType<typeof Bun.serve>;
let gw: RunningGateway;
let plain: RunningGateway;

function channelConfig(extra: string): string {
  return `${extra}
[[channels]]
kind = "openai-chat"
name = "slow"
base_url = "http://127.0.0.1:${upstream.port}/v1"
models = ["modelx-5.5"]
`;
}

beforeAll(async () => {
  upstream = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      await request.arrayBuffer();
      await Bun.sleep(UPSTREAM_DELAY_MS);
      return Response.json(COMPLETION);
    },
  });
  [gw, plain] = await Promise.all([
    startGateway({ config: channelConfig("[metrics]\noverhead_header = true\n") }),
    startGateway({ config: channelConfig("[metrics]\nenabled = false\n") }),
  ]);
}, 30_000);

afterAll(async () => {
  await Promise.all([gw?.dispose(), plain?.dispose()]);
  upstream?.stop(true);
});

function chat(target: RunningGateway, key = target.key ?? ""): Promise<Response> {
  return fetch(`${target.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "modelx-5.5", messages: [{ role: "user", content: "hi" }] }),
  });
}

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the Prometheus text format; throws on a line that is not a comment or a sample. */
function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("# HELP ") || line.startsWith("# TYPE ")) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[pair[1] ?? ""] = pair[2] ?? "";
    }
    const raw = match[3] ?? "";
    samples.push({ name: match[1] ?? "", labels, value: raw === "+Inf" ? Infinity : Number(raw) });
  }
  return samples;
}

function find(samples: Sample[], name: string, labels: Record<string, string>): Sample[] {
  return samples.filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
}

describe("overhead header", () => {
  test("every answer carries x-modelgate-overhead-us, excluding the upstream's 300 ms", async () => {
    for (let i = 0; i < 3; i++) {
      const started = performance.now();
      const response = await chat(gw);
      const body = (await response.json()) as typeof COMPLETION;
      const elapsedMs = performance.now() - started;
      expect(response.status).toBe(200);
      expect(body.choices[0]?.message.content).toBe("ok");
      const header = response.headers.get("x-modelgate-overhead-us");
      expect(header).toMatch(/^\d+$/);
      // overhead = total − upstream ≤ (what the client waited) − (what the upstream waited)
      expect(Number(header) / 1000).toBeLessThanOrEqual(elapsedMs - UPSTREAM_DELAY_MS + 1);
    }
    const refused = await chat(gw, "sk-not-a-key");
    expect(refused.status).toBe(401);
    expect(refused.headers.get("x-modelgate-overhead-us")).toMatch(/^\d+$/);
  });

  test("without the setting there is no header, and /metrics can be switched off", async () => {
    const response = await chat(plain);
    expect(response.status).toBe(200);
    expect(response.headers.get("x-modelgate-overhead-us")).toBeNull();
    expect((await fetch(`${plain.url}/metrics`)).status).toBe(404);
  });
});

describe("GET /metrics", () => {
  test("parses, counts requests by route and status, and histograms the same requests", async () => {
    const before = parseExposition(await (await fetch(`${gw.url}/metrics`)).text());
    const count = (samples: Sample[], labels: Record<string, string>) =>
      find(samples, "modelgate_requests_total", { route: "/v1/chat/completions", ...labels })[0]?.value ?? 0;
    const ok0 = count(before, { status: "200" });
    const unauthorized0 = count(before, { status: "401" });
    for (let i = 0; i < 2; i++) expect((await chat(gw)).status).toBe(200);
    expect((await chat(gw, "sk-not-a-key")).status).toBe(401);

    const response = await fetch(`${gw.url}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    const samples = parseExposition(await response.text());
    expect(count(samples, { method: "POST", status: "200" })).toBe(ok0 + 2);
    expect(count(samples, { method: "POST", status: "401" })).toBe(unauthorized0 + 1);

    const route = { route: "/v1/chat/completions" };
    const answered = count(samples, { status: "200" }) + count(samples, { status: "401" });
    const histogramCount = find(samples, "modelgate_overhead_seconds_count", route)[0]?.value;
    expect(histogramCount).toBe(answered);
    const buckets = find(samples, "modelgate_overhead_seconds_bucket", route).map((s) => s.value);
    expect(buckets.length).toBeGreaterThan(2);
    for (let i = 1; i < buckets.length; i++) expect(buckets[i]).toBeGreaterThanOrEqual(buckets[i - 1] ?? 0);
    expect(find(samples, "modelgate_overhead_seconds_bucket", { ...route, le: "+Inf" })[0]?.value).toBe(
      answered,
    );
    // Only the requests that reached the upstream waited on it: 200s, not the 401s.
    expect(find(samples, "modelgate_upstream_seconds_count", route)[0]?.value).toBe(
      count(samples, { status: "200" }),
    );
    expect(find(samples, "process_resident_memory_bytes", {})[0]?.value).toBeGreaterThan(1_000_000);
  });
});
