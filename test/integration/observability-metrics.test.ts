// The traffic metrics and the Grafana dashboard against a live scrape of the compiled gateway
// (telemetry off): every dashboard query names a metric /metrics exposes; tokens and cost by model,
// key (capped at metrics.max_key_labels) and channel; attempts by outcome; TTFT; errors by kind;
// refusals by reason; circuit state per channel; journal backlog. With telemetry off, a client's
// traceparent still reaches the upstream unchanged.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { chatAnswer, chatChannelToml, chatStreamAnswer, postChat } from "../helpers/chat-rig.ts";
import { createKey, type RunningGateway, startGateway } from "../helpers/gateway.ts";
import { type RecordingUpstream, startRecordingUpstream } from "../helpers/recording-upstream.ts";
import { keyAccepted } from "../helpers/wait.ts";

const MODEL = "modelx-5.4-mini";
const TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

let broken: RecordingUpstream;
let good: RecordingUpstream;
let gw: RunningGateway;

beforeAll(async () => {
  broken = startRecordingUpstream(() => new Response("overloaded", { status: 503 }));
  const usage = { prompt_tokens: 7, completion_tokens: 3 };
  good = startRecordingUpstream((r) =>
    (r.json as { stream?: boolean }).stream === true
      ? chatStreamAnswer(MODEL, "ok", usage)
      : chatAnswer(MODEL, "ok", usage),
  );
  const channel = (name: string, url: string, priority: number) =>
    chatChannelToml(name, url, MODEL, priority);
  gw = await startGateway({
    config: `[bootstrap]\nbalance_usd = "100"\n[metrics]\nmax_key_labels = 1\n[routing]\nbackoff_base_ms = 10\nbackoff_max_ms = 20\n${channel("broken", broken.url, 10)}${channel("good", good.url, 1)}`,
  });
});

afterAll(async () => {
  await gw?.dispose();
  await Promise.all([broken?.stop(), good?.stop()]);
});

function chat(secret: string, stream: boolean, headers: Record<string, string> = {}): Promise<Response> {
  return postChat(gw, secret, { model: MODEL, stream, content: "hi", headers });
}

/** Sample lines of a scrape: metric name with labels → value. */
function samples(text: string): { name: string; labels: Record<string, string>; value: number }[] {
  const out: { name: string; labels: Record<string, string>; value: number }[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const m of (match[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[m[1] ?? ""] = m[2] ?? "";
    out.push({ name: match[1] ?? "", labels, value: Number(match[3]) });
  }
  return out;
}

function value(all: ReturnType<typeof samples>, name: string, labels: Record<string, string>): number {
  const found = all.filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  return found.reduce((sum, s) => sum + s.value, 0);
}

describe("traffic metrics and the Grafana dashboard", () => {
  let scrape: ReturnType<typeof samples>;

  beforeAll(async () => {
    const first = await createKey(gw, ["--account", "default", "--name", "alpha"]);
    const second = await createKey(gw, ["--account", "default", "--name", "beta", "--rpm", "1"]);
    // The later key seen means the earlier one is too (one store revision covers both).
    await keyAccepted(gw.url, second.secret);
    expect((await chat(first.secret, false, { traceparent: TRACEPARENT })).status).toBe(200);
    const streamed = await chat(first.secret, true);
    expect(streamed.status).toBe(200);
    await streamed.text();
    expect((await chat(second.secret, false)).status).toBe(200);
    expect((await chat(second.secret, false)).status).toBe(429);
    const response = await fetch(`${gw.url}/metrics`);
    expect(response.status).toBe(200);
    scrape = samples(await response.text());
  });

  test("every dashboard query names a metric that /metrics exposes", () => {
    const dashboard = JSON.parse(
      readFileSync(join(import.meta.dir, "../../docs/grafana/modelgate.json"), "utf8"),
    ) as {
      panels: { type: string; title: string; targets?: { expr: string }[] }[];
    };
    const exposed = new Set(scrape.map((s) => s.name));
    const queries = dashboard.panels.flatMap((p) => p.targets ?? []);
    expect(queries.length).toBeGreaterThan(10);
    const named = new Set<string>();
    for (const { expr } of queries) {
      const names = [...expr.matchAll(/\b((?:modelgate|process)_[a-z0-9_]+)\b/g)].map((m) => m[1] ?? "");
      expect(names.length).toBeGreaterThan(0);
      for (const n of names) named.add(n);
    }
    const missing = [...named].filter((n) => !exposed.has(n));
    expect(missing).toEqual([]);
    // Every panel that is not a row has a query.
    for (const panel of dashboard.panels.filter((p) => p.type !== "row"))
      expect(panel.targets?.length ?? 0).toBeGreaterThan(0);
  });

  test("tokens and cost by model, key (capped: the second key is `other`) and answering channel", () => {
    expect(
      value(scrape, "modelgate_tokens_total", { model: MODEL, key: "alpha", channel: "good", type: "input" }),
    ).toBe(14);
    expect(
      value(scrape, "modelgate_tokens_total", {
        model: MODEL,
        key: "alpha",
        channel: "good",
        type: "output",
      }),
    ).toBe(6);
    expect(value(scrape, "modelgate_tokens_total", { model: MODEL, key: "other", type: "output" })).toBe(3);
    expect(value(scrape, "modelgate_tokens_total", { key: "beta" })).toBe(0);
    expect(value(scrape, "modelgate_cost_usd_total", { key: "alpha", channel: "good" })).toBeGreaterThan(0);
  });

  test("attempts by channel and outcome, TTFT of the stream, refusals and errors, circuit state, backlog", () => {
    expect(
      value(scrape, "modelgate_upstream_attempt_duration_seconds_count", {
        channel: "broken",
        outcome: "upstream_failed",
      }),
    ).toBe(3);
    expect(
      value(scrape, "modelgate_upstream_attempt_duration_seconds_count", { channel: "good", outcome: "ok" }),
    ).toBe(3);
    expect(value(scrape, "modelgate_time_to_first_token_seconds_count", { channel: "good" })).toBe(1);
    expect(value(scrape, "modelgate_limit_refusals_total", { reason: "rate_limit_exceeded" })).toBe(1);
    expect(value(scrape, "modelgate_errors_total", { kind: "rate_limited", status: "429" })).toBe(1);
    expect(
      scrape.some((s) => s.name === "modelgate_channel_circuit_state" && s.labels.channel === "broken"),
    ).toBe(true);
    expect(value(scrape, "modelgate_channel_circuit_state", { channel: "good" })).toBe(0);
    expect(scrape.some((s) => s.name === "modelgate_usage_journal_backlog_records")).toBe(true);
  });

  test("telemetry off: no exporter started, and the client's traceparent reaches the upstream unchanged", () => {
    expect(gw.logs()).not.toContain("telemetry:");
    const traced = good.requests.find((r) => r.headers.traceparent !== undefined);
    expect(traced?.headers.traceparent).toBe(TRACEPARENT);
    expect(broken.requests[0]?.headers.traceparent).toBe(TRACEPARENT);
  });
});
