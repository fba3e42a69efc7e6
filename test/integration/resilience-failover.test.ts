// Fault injection through the compiled gateway and `modelgate sim` upstreams: failover on 500,
// waiting out a 429's Retry-After, first-byte timeout on a hanging channel, a stream cut after 5
// events (error event, no retry), and the circuit breaker opening, skipping and closing by probe.
// Each test checks what the client saw, what the simulators counted and the usage record.
import { afterEach, describe, expect, test } from "bun:test";
import { type RunningGateway, startGateway } from "../helpers/gateway.ts";
import {
  chat,
  chatChannel,
  chatEvents,
  FAST_ROUTING,
  type SimProcess,
  startSim,
  usageRecords,
  waitForRecords,
} from "./resilience-rig.ts";

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanup.map((c) => c()));
  cleanup = [];
});

async function sims(...profiles: Record<string, number | boolean>[]): Promise<SimProcess[]> {
  const started = await Promise.all(profiles.map((p) => startSim(p)));
  for (const s of started) cleanup.push(() => s.stop());
  return started;
}

async function pair(
  a: Record<string, number | boolean>,
  b: Record<string, number | boolean>,
): Promise<[SimProcess, SimProcess]> {
  const [x, y] = await sims(a, b);
  if (x === undefined || y === undefined) throw new Error("simulators did not start");
  return [x, y];
}

async function gateway(config: string): Promise<RunningGateway> {
  const gw = await startGateway({ config });
  cleanup.push(() => gw.dispose());
  return gw;
}

describe("failover and retries", () => {
  test("primary answers 500 → the secondary serves; the client gets 200; one usage record lists both", async () => {
    const [primary, secondary] = await pair({ rate_500: 1 }, {});
    const gw = await gateway(
      FAST_ROUTING +
        chatChannel("primary", primary, "priority = 10") +
        chatChannel("secondary", secondary, "priority = 1"),
    );
    const response = await chat(gw, false);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { choices: { message: { content: string } }[] };
    expect(body.choices[0]?.message.content.length).toBeGreaterThan(0);
    expect((await primary.stats()).calls).toBe(1);
    expect((await primary.stats()).errors).toEqual({ "500": 1 });
    expect((await secondary.stats()).calls).toBe(1);
    const rows = await waitForRecords(gw, 1);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.status).toBe(200);
    expect(rows[0]?.channels).toBe("primary,secondary");
  });

  test("primary answers 429 with Retry-After: 1 and there is no secondary → retried after the wait, 200", async () => {
    const [only] = await sims({ fail_first: 1, fail_status: 429, retry_after_seconds: 1 });
    if (only === undefined) throw new Error("no sim");
    const gw = await gateway(FAST_ROUTING + chatChannel("only", only));
    const sent = performance.now();
    const response = await chat(gw, false);
    const waited = performance.now() - sent;
    expect(response.status).toBe(200);
    await response.arrayBuffer();
    const stats = await only.stats();
    expect(stats.calls).toBe(2);
    expect(stats.errors).toEqual({ "429": 1 });
    // The Retry-After was honoured (not a fast backoff of tens of milliseconds).
    expect(waited).toBeGreaterThanOrEqual(950);
    const rows = await waitForRecords(gw, 1);
    expect(rows.map((r) => [r.status, r.channels])).toEqual([[200, "only,only"]]);
  });

  test("primary hangs → first-byte timeout → the secondary serves the stream; the hung call is cancelled", async () => {
    const [hung, healthy] = await pair({ hang_rate: 1 }, {});
    const gw = await gateway(
      FAST_ROUTING +
        chatChannel("hung", hung, "priority = 10\ntimeouts = { first_byte_ms = 300 }") +
        chatChannel("healthy", healthy),
    );
    const response = await chat(gw, true);
    expect(response.status).toBe(200);
    const events = chatEvents(await response.text());
    expect(events.some((e) => "usage" in e && e.usage !== null)).toBe(true);
    expect(events.some((e) => "error" in e)).toBe(false);
    const stats = await hung.stats();
    expect(stats.calls).toBe(1);
    expect(stats.hangs).toBe(1);
    expect(stats.cancelled).toBe(1);
    expect((await healthy.stats()).completed).toBe(1);
    const rows = await waitForRecords(gw, 1);
    expect(rows.map((r) => [r.status, r.channels])).toEqual([[200, "hung,healthy"]]);
  });

  test("without a secondary the first-byte timeout is a 504 naming the timeout", async () => {
    const [hung] = await sims({ hang_rate: 1 });
    if (hung === undefined) throw new Error("no sim");
    const gw = await gateway(
      `${FAST_ROUTING}${chatChannel("hung", hung, "retries = 0\ntimeouts = { first_byte_ms = 200 }")}`,
    );
    const response = await chat(gw, false);
    expect(response.status).toBe(504);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("upstream_first_byte_timeout");
    expect(body.error.message).toContain("first-byte timeout");
    expect((await hung.stats()).cancelled).toBe(1);
    const rows = await waitForRecords(gw, 1);
    expect(rows.map((r) => [r.status, r.channels, r.output_tokens])).toEqual([[504, "hung", 0]]);
  });

  test("the stream drops after 5 events → the client gets the error event, usage covers what was delivered, no retry", async () => {
    const [dropping, spare] = await pair({ disconnect_after_events: 5 }, {});
    const gw = await gateway(
      FAST_ROUTING + chatChannel("dropping", dropping, "priority = 10") + chatChannel("spare", spare),
    );
    const response = await chat(gw, true);
    expect(response.status).toBe(200);
    const events = chatEvents(await response.text());
    const deltas = events.filter((e) => Array.isArray(e.choices) && (e.choices as unknown[]).length > 0);
    const last = events.at(-1) as { error?: { code: string } } | undefined;
    expect(last?.error?.code).toBe("upstream_failed");
    expect(deltas.length).toBeGreaterThanOrEqual(5);
    const stats = await dropping.stats();
    expect(stats.calls).toBe(1);
    expect(stats.disconnects).toBe(1);
    expect((await spare.stats()).calls).toBe(0);
    const rows = await waitForRecords(gw, 1);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.channels).toBe("dropping");
    expect(rows[0]?.output_tokens).toBeGreaterThanOrEqual(5);
  });
});

describe("circuit breaker", () => {
  test("opens after the configured failures, skips the channel without calling it, then a probe closes it", async () => {
    const [flaky, backup] = await pair({ rate_500: 1 }, {});
    const gw = await gateway(
      FAST_ROUTING +
        chatChannel(
          "flaky",
          flaky,
          "priority = 10\nretries = 0\ncircuit = { failures = 2, cooldown_ms = 700 }",
        ) +
        chatChannel("backup", backup),
    );
    const readyz = async () =>
      (
        (await (await fetch(`${gw.url}/readyz`)).json()) as {
          channels: { name: string; circuit: { state: string } }[];
        }
      ).channels;
    for (let i = 0; i < 2; i++) expect((await chat(gw, false)).status).toBe(200);
    expect((await flaky.stats()).calls).toBe(2);
    expect((await readyz()).find((c) => c.name === "flaky")?.circuit.state).toBe("open");

    for (let i = 0; i < 3; i++) expect((await chat(gw, false)).status).toBe(200);
    expect((await flaky.stats()).calls).toBe(2);
    expect((await backup.stats()).calls).toBe(5);

    await flaky.setProfile({});
    await Bun.sleep(750); // time is what is tested: past the circuit's 700 ms cooldown
    expect((await readyz()).find((c) => c.name === "flaky")?.circuit.state).toBe("half_open");
    expect((await chat(gw, false)).status).toBe(200);
    expect((await flaky.stats()).calls).toBe(3);
    expect((await readyz()).find((c) => c.name === "flaky")?.circuit.state).toBe("closed");
    expect((await chat(gw, false)).status).toBe(200);
    expect((await flaky.stats()).calls).toBe(4);

    const rows = await waitForRecords(gw, 7);
    expect(rows.map((r) => r.channels)).toEqual([
      "flaky,backup",
      "flaky,backup",
      "backup",
      "backup",
      "backup",
      "flaky",
      "flaky",
    ]);
    expect(usageRecords(gw).every((r) => r.status === 200)).toBe(true);
  });
});
