// The stage timeline (`server.stage_trace`): off unless set, and when set, written at the stop with
// every stage of a served request in order, beside the event loop's other work.
import { afterAll, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { STAGES, timeline } from "../../src/telemetry/timeline.ts";
import { type RunningGateway, startGateway, tempDir } from "../helpers/gateway.ts";

interface Stamp {
  t: number;
  kind: string;
  request: number;
  value: number;
  label: string;
}

const started: RunningGateway[] = [];
afterAll(async () => {
  for (const gw of started) await gw.dispose();
});

async function chat(gw: RunningGateway): Promise<void> {
  const response = await fetch(`${gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${gw.key}`, "content-type": "application/json" },
    body: JSON.stringify({
      model: "modelx-5.4-mini",
      max_tokens: 20,
      messages: [{ role: "user", content: "hi" }],
    }),
  });
  expect(response.status).toBe(200);
  await response.text();
}

test("off by default: nothing is recorded and no file is written", async () => {
  expect(timeline).toBeUndefined();
  const dir = tempDir();
  const gw = await startGateway({ dir });
  started.push(gw);
  await chat(gw);
  const before = new Set(readdirSync(dir));
  expect(await gw.stop()).toBe(0);
  // The stop writes no file the run had not already made (the store and its journal).
  expect(readdirSync(dir).filter((f) => !before.has(f) && !f.startsWith("modelgate"))).toEqual([]);
});

test("on: every stage of a served request, in order, and the event loop's other work, written at the stop", async () => {
  const dir = tempDir();
  const file = join(dir, "stages.jsonl");
  const gw = await startGateway({ dir, env: { MODELGATE_STAGE_TRACE: file } });
  started.push(gw);
  await chat(gw);
  await chat(gw);
  expect(existsSync(file)).toBe(false);
  expect(await gw.stop()).toBe(0);
  const stamps = readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Stamp);
  const requests = new Set(stamps.filter((s) => s.kind === "upstream_sent").map((s) => s.request));
  expect(requests.size).toBe(2);
  for (const request of requests) {
    const own = stamps.filter((s) => s.request === request);
    expect(own.map((s) => s.kind)).toEqual([...STAGES]);
    const times = own.map((s) => s.t);
    expect(times).toEqual([...times].sort((a, b) => a - b));
  }
  const kinds = new Set(stamps.map((s) => s.kind));
  // Each settlement's journal append, and the immediates that run the writer.
  expect(kinds.has("journal_append")).toBe(true);
  expect(kinds.has("immediate")).toBe(true);
});
