// The settled cost with several worker processes (`server.workers = 2`): a worker's meter asks the
// primary to settle, and the primary's answer carries the cost back, so the header of a JSON answer
// and the closing comment of a stream name the same cost as the usage record.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type RunningGateway, startGateway } from "../helpers/gateway.ts";
import { waitForUsage } from "../helpers/usage-records.ts";

let gw: RunningGateway;

beforeAll(async () => {
  gw = await startGateway({ config: "[server]\nworkers = 2\n[sim]\nseed = 4\n" });
}, 60_000);
afterAll(async () => {
  await gw.dispose();
}, 30_000);

const nanosOf = (usd: string) => {
  const [whole = "0", fraction = ""] = usd.split(".");
  return Number(whole) * 1e9 + Number(fraction.padEnd(9, "0"));
};

test("JSON and stream answers served by workers carry the recorded cost", async () => {
  for (const stream of [false, true]) {
    const response = await fetch(`${gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${gw.key ?? ""}` },
      body: JSON.stringify({
        model: "modelx-5.4",
        messages: [{ role: "user", content: "Count to five." }],
        stream,
        ...(stream ? { stream_options: { include_usage: true } } : {}),
      }),
    });
    expect(response.status).toBe(200);
    const text = await response.text();
    const said = stream
      ? /: x-modelgate-cost-usd (\d+\.\d+)\n\n$/.exec(text)?.[1]
      : (response.headers.get("x-modelgate-cost-usd") ?? undefined);
    expect(said).toBeDefined();
    const record = await waitForUsage(gw, response.headers.get("x-request-id") ?? "");
    expect(record.cost_nanos).toBeGreaterThan(0);
    expect(nanosOf(said ?? "")).toBe(record.cost_nanos);
  }
});
