// Load, cancellation and drain through the compiled gateway and one `modelgate sim` upstream:
// 300 concurrent streams all in flight upstream at once; a client that goes away mid-stream
// cancels the upstream call; SIGTERM during 20 open streams lets all 20 finish, refuses new
// connections, exits within the deadline and leaves 20 usage records.
import { afterEach, expect, test } from "bun:test";
import { startGateway } from "../helpers/gateway.ts";
import { waitFor } from "../helpers/wait.ts";
import {
  chatBody,
  chatChannel,
  chatEvents,
  FAST_ROUTING,
  rawPost,
  startSim,
  waitForRecords,
} from "./resilience-rig.ts";

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanup.map((c) => c()));
  cleanup = [];
});

function finishedNormally(body: string): boolean {
  const events = chatEvents(body);
  return body.includes("data: [DONE]") && !events.some((e) => "error" in e);
}

test("300 concurrent streams through one simulated upstream are all in flight at once and all complete", async () => {
  // Each answer takes about 1.5 s upstream, so every stream overlaps every other one.
  const sim = await startSim({ ttft_ms: 1500 });
  cleanup.push(() => sim.stop());
  const gw = await startGateway({ config: FAST_ROUTING + chatChannel("sim", sim) });
  cleanup.push(() => gw.dispose());
  const url = `${gw.url}/v1/chat/completions`;
  const answers = await Promise.all(
    Array.from({ length: 300 }, () => rawPost(url, gw.key ?? "", chatBody(true, "hello"))),
  );
  expect(answers.filter((a) => a.status === 200)).toHaveLength(300);
  expect(answers.filter((a) => finishedNormally(a.body))).toHaveLength(300);
  const stats = await sim.stats();
  expect(stats.calls).toBe(300);
  expect(stats.completed).toBe(300);
  expect(stats.max_in_flight).toBe(300);
  expect(await waitForRecords(gw, 300)).toHaveLength(300);
}, 60_000);

test("a client that goes away mid-stream cancels the upstream call", async () => {
  const sim = await startSim({ tokens_per_second: 20 });
  cleanup.push(() => sim.stop());
  const gw = await startGateway({ config: FAST_ROUTING + chatChannel("sim", sim) });
  cleanup.push(() => gw.dispose());
  const abort = new AbortController();
  const response = await fetch(`${gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${gw.key ?? ""}` },
    body: chatBody(true, "Tell me a long story."),
    signal: abort.signal,
  });
  const reader = response.body?.getReader();
  if (reader === undefined) throw new Error("no body");
  let received = "";
  while (!received.includes('"content"')) {
    const { value } = await reader.read();
    received += new TextDecoder().decode(value);
  }
  abort.abort();
  const until = Date.now() + 5000;
  let stats = await sim.stats();
  while (stats.cancelled === 0 && Date.now() < until) {
    await Bun.sleep(20);
    stats = await sim.stats();
  }
  expect(stats.calls).toBe(1);
  expect(stats.cancelled).toBe(1);
  expect(stats.completed).toBe(0);
  expect(stats.in_flight).toBe(0);
  const rows = await waitForRecords(gw, 1);
  expect(rows).toHaveLength(1);
  expect(rows[0]?.channels).toBe("sim");
});

test("SIGTERM during 20 open streams: all 20 complete, new connections are refused, exit within the deadline, 20 usage records", async () => {
  const sim = await startSim({ ttft_ms: 300, tokens_per_second: 40 });
  cleanup.push(() => sim.stop());
  const gw = await startGateway({
    config: `[server]\nshutdown_deadline_seconds = 20\n${FAST_ROUTING}${chatChannel("sim", sim)}`,
  });
  cleanup.push(() => gw.dispose());
  const url = `${gw.url}/v1/chat/completions`;
  let started = 0;
  const allStarted = Promise.withResolvers<void>();
  const streams = Array.from({ length: 20 }, () => {
    let first = true;
    return rawPost(url, gw.key ?? "", chatBody(true, "Tell me a story."), () => {
      if (first) {
        first = false;
        if (++started === 20) allStarted.resolve();
      }
    });
  });
  await allStarted.promise;
  gw.proc.kill("SIGTERM");
  // The listener stops taking connections once the signal is handled (each probe on a new one).
  await waitFor("the listener to close", async () => {
    try {
      await (await fetch(`${gw.url}/healthz`, { keepalive: false })).arrayBuffer();
      return false;
    } catch {
      return true;
    }
  });
  await expect(fetch(`${gw.url}/healthz`)).rejects.toThrow();
  const answers = await Promise.all(streams);
  expect(answers.filter((a) => a.status === 200 && finishedNormally(a.body))).toHaveLength(20);
  expect(await gw.proc.exited).toBe(0);
  expect(gw.logs()).toContain('"msg":"stopped","drained":true');
  const stats = await sim.stats();
  expect(stats.completed).toBe(20);
  expect(stats.cancelled).toBe(0);
  expect(await waitForRecords(gw, 20)).toHaveLength(20);
}, 60_000);
