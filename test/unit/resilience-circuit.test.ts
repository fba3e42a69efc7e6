// Unit tests of the circuit breaker, the channel order and the backoff.
import { describe, expect, test } from "bun:test";
import * as v from "valibot";
import { CircuitSchema, RoutingSchema } from "../../src/config/channels.ts";
import { ConfigSchema } from "../../src/config/schema.ts";
import { ChannelTable, orderChannels } from "../../src/upstream/channels.ts";
import { Circuit } from "../../src/upstream/circuit.ts";
import { backoffMs } from "../../src/upstream/retry.ts";
import { mid } from "../helpers/ids.ts";

function clock() {
  let now = 1000;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

describe("circuit breaker", () => {
  test("opens after consecutive failures, admits exactly one probe after the cool-down, closes on success", () => {
    const c = clock();
    const circuit = new Circuit(v.parse(CircuitSchema, { failures: 3, cooldown_ms: 100 }), c.now);
    for (let i = 0; i < 3; i++) {
      expect(circuit.tryAcquire()).toBe(true);
      circuit.failure();
    }
    expect(circuit.snapshot().state).toBe("open");
    expect(circuit.tryAcquire()).toBe(false);
    expect(circuit.waitMs()).toBe(100);
    c.advance(100);
    expect(circuit.tryAcquire()).toBe(true);
    expect(circuit.tryAcquire()).toBe(false);
    circuit.success();
    expect(circuit.snapshot().state).toBe("closed");
    expect(circuit.tryAcquire()).toBe(true);
  });

  test("a failed probe opens it for another cool-down", () => {
    const c = clock();
    const circuit = new Circuit(v.parse(CircuitSchema, { failures: 1, cooldown_ms: 50 }), c.now);
    circuit.failure();
    c.advance(50);
    expect(circuit.tryAcquire()).toBe(true);
    circuit.failure();
    expect(circuit.snapshot()).toMatchObject({ state: "open", opened_count: 2 });
    expect(circuit.tryAcquire()).toBe(false);
  });

  test("opens on the failure ratio once min_calls were made, even without a streak", () => {
    const circuit = new Circuit(
      v.parse(CircuitSchema, { failures: 100, failure_ratio: 0.5, window: 10, min_calls: 4 }),
    );
    circuit.failure();
    circuit.success();
    circuit.failure();
    expect(circuit.snapshot().state).toBe("closed");
    circuit.failure();
    expect(circuit.snapshot()).toMatchObject({ state: "open", recent_failures: 3, recent_calls: 4 });
  });
});

describe("channel order and backoff", () => {
  const config = v.parse(ConfigSchema, {
    channels: [
      { kind: "sim", name: "low", priority: 1 },
      { kind: "sim", name: "heavy", priority: 5, weight: 9 },
      { kind: "sim", name: "light", priority: 5, weight: 1 },
    ],
  });
  const table = new ChannelTable(config);

  test("higher priority first; within a priority the weight decides how often a channel leads", () => {
    const channels = table.forModel(mid("modelx-5.4"));
    let heavyFirst = 0;
    let seed = 1;
    const random = () => {
      seed = (seed * 16807) % 2147483647;
      return seed / 2147483647;
    };
    for (let i = 0; i < 2000; i++) {
      const order = orderChannels(channels, random).map((c) => c.name);
      expect(order[2]).toBe("low");
      if (order[0] === "heavy") heavyFirst++;
    }
    expect(heavyFirst / 2000).toBeGreaterThan(0.85);
    expect(heavyFirst / 2000).toBeLessThan(0.95);
  });

  test("backoff doubles from the base up to the cap, jittered between half and all of it", () => {
    const policy = v.parse(RoutingSchema, { backoff_base_ms: 100, backoff_max_ms: 1000 });
    expect(backoffMs(0, policy, () => 0)).toBe(50);
    expect(backoffMs(0, policy, () => 1)).toBe(100);
    expect(backoffMs(2, policy, () => 1)).toBe(400);
    expect(backoffMs(8, policy, () => 1)).toBe(1000);
  });

  test("a concurrency cap makes the channel unavailable until a lease is released", () => {
    const capped = new ChannelTable(
      v.parse(ConfigSchema, { channels: [{ kind: "sim", name: "one", max_concurrency: 1 }] }),
    ).all()[0];
    if (capped === undefined) throw new Error("no channel");
    const lease = capped.acquire();
    if (typeof lease === "string") throw new Error(lease);
    expect(capped.acquire()).toBe("at_capacity");
    lease.release("success");
    lease.release("success");
    expect(capped.inFlight).toBe(0);
    expect(typeof capped.acquire()).toBe("object");
  });
});
