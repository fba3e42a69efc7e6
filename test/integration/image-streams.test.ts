// Every image stream ends with its final event or an error event, and bills what it delivered: the
// compiled gateway streaming image generations from the in-process simulator (kind "sim") and from
// an OpenAI-style images upstream over HTTP (the simulator served by `startSimServer`), for
// n = 1..3 × partial_images = 0..3 — exactly n × partial_images `image.partial_image` events, then
// one `image.completed` with n images, billed n × (1 + partial_images) generations — and streams
// cut short by a scripted openai-images upstream (dropped after progress images, an error event
// after a final image, a client that goes away): an error event (or nothing, for the client that
// left), billing only the progress images sent, never the final images the client did not get; a
// non-stream request that fails after an image bills nothing.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { createParser } from "eventsource-parser";
import { type SimServer, startSimServer } from "../../src/sim/server.ts";
import { type RunningGateway, startGateway } from "../helpers/gateway.ts";
import { type RecordingUpstream, startRecordingUpstream } from "../helpers/recording-upstream.ts";
import { eventStream } from "../helpers/scripted-streams.ts";
import { recordsOf } from "../helpers/usage-records.ts";
import { flatPng } from "../unit/images-fixtures.ts";

// A stalled stream is cut by its client after 12 s; a test waits for that on a loaded machine.
setDefaultTimeout(30_000);

const MODEL = { sim: "modelx-image-2", http: "modelx-image-1.5", scripted: "modelx-image-1" } as const;
type Upstream = keyof typeof MODEL;

let sim: SimServer;
let scripted: RecordingUpstream;
let gw: RunningGateway;
let db: Database;
let seq = 0;

beforeAll(async () => {
  sim = startSimServer({ hostname: "127.0.0.1", port: 0, seed: 7 });
  scripted = startRecordingUpstream(() => new Response("no script", { status: 500 }));
  // A short idle timeout: a stream that stalls fails these tests in seconds, not minutes.
  gw = await startGateway({
    config: `
[routing]
max_attempts = 1

[[channels]]
kind = "sim"
name = "sim"
models = ["${MODEL.sim}"]
timeouts = { idle_ms = 8000 }

[[channels]]
kind = "openai-images"
name = "http-sim"
base_url = "${sim.url}/v1"
models = ["${MODEL.http}"]
timeouts = { idle_ms = 8000 }

[[channels]]
kind = "openai-images"
name = "scripted"
base_url = "${scripted.url}/v1"
models = ["${MODEL.scripted}"]
timeouts = { idle_ms = 8000 }
`,
  });
  db = new Database(gw.dbUrl.replace(/^sqlite:\/\//, ""), { readonly: true });
}, 30_000);

afterAll(async () => {
  db.close();
  await gw.dispose();
  await scripted.stop();
  await sim.stop();
});

interface StoredRecord {
  generations: number;
  usage_source: string;
  status: number;
}

/** The request's usage records (waited for). */
function storedRecords(requestId: string): Promise<StoredRecord[]> {
  return recordsOf<StoredRecord>(db, requestId, "generations, usage_source, status", "exact", gw);
}

interface Frame {
  name: string | undefined;
  data: { type?: string; data?: unknown[]; partial_image_index?: number; error?: unknown };
}

/** POSTs a generation request under `requestId`. */
function postGeneration(body: object, requestId: string, signal?: AbortSignal): Promise<Response> {
  return fetch(`${gw.url}/v1/images/generations`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${gw.key}`,
      "content-type": "application/json",
      "x-request-id": requestId,
    },
    body: JSON.stringify(body),
    signal: signal ?? null,
  });
}

/** Streams one generation; reads every frame, or goes away after `stopAfter` frames. */
async function generate(upstream: Upstream, n: number, partials: number, stopAfter?: number) {
  const requestId = `img-${process.pid}-${++seq}`;
  const abort = new AbortController();
  const body = { model: MODEL[upstream], prompt: "a kite", size: "32x32", quality: "low", stream: true, n };
  // A stalled stream fails its own test, not the ones after it.
  const signal = AbortSignal.any([abort.signal, AbortSignal.timeout(12_000)]);
  const response = await postGeneration({ ...body, partial_images: partials }, requestId, signal);
  expect(response.status).toBe(200);
  const frames: Frame[] = [];
  const parser = createParser({
    onEvent: (e) => frames.push({ name: e.event, data: JSON.parse(e.data) as Frame["data"] }),
  });
  const reader = response.body?.getReader();
  if (reader === undefined) throw new Error("no body");
  const decoder = new TextDecoder();
  for (;;) {
    if (stopAfter !== undefined && frames.length >= stopAfter) {
      await reader.cancel();
      abort.abort();
      break;
    }
    const { value, done } = await reader.read();
    if (done) break;
    parser.feed(decoder.decode(value, { stream: true }));
  }
  return { requestId, frames };
}

describe("every image stream ends with image.completed and bills n × (1 + partial_images)", () => {
  for (const upstream of ["sim", "http"] as const) {
    for (const n of [1, 2, 3]) {
      for (const partials of [0, 1, 2, 3]) {
        test(`${upstream === "sim" ? "simulator" : "openai-images"} upstream, n=${n}, partial_images=${partials}`, async () => {
          const { requestId, frames } = await generate(upstream, n, partials);
          const names = frames.map((f) => f.name);
          expect(names).toEqual([
            ...Array.from({ length: n * partials }, () => "image.partial_image"),
            "image.completed",
          ]);
          // Progress images are numbered per final image.
          const indexes = frames.slice(0, -1).map((f) => f.data.partial_image_index);
          expect(indexes).toEqual(Array.from({ length: n * partials }, (_, i) => i % partials));
          expect(frames.at(-1)?.data.data).toHaveLength(n);
          const records = await storedRecords(requestId);
          expect(records).toEqual([
            { generations: n * (1 + partials), usage_source: "reported", status: 200 },
          ]);
        });
      }
    }
  }
});

const PNG = Buffer.from(flatPng(8, 8)).toString("base64");

function event(type: string, fields: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...fields })}\n\n`;
}
const partial = (index: number) =>
  event("image_generation.partial_image", { b64_json: PNG, partial_image_index: index });
const completed = event("image_generation.completed", {
  b64_json: PNG,
  usage: { input_tokens: 10, output_tokens: 20, total_tokens: 30 },
});

describe("a stream cut before its final images bills only the progress images sent", () => {
  test("the upstream drops after two progress images: an error event, 2 generations", async () => {
    scripted.answer(() => eventStream([partial(0), partial(1)], false));
    const { requestId, frames } = await generate("scripted", 2, 2);
    expect(frames.map((f) => f.name)).toEqual(["image.partial_image", "image.partial_image", "error"]);
    expect(await storedRecords(requestId)).toEqual([
      { generations: 2, usage_source: "counted", status: 200 },
    ]);
  });

  test("an error event after the first final image: an error event, the final image not billed", async () => {
    const failed = event("error", { error: { message: "the image could not be generated", code: null } });
    scripted.answer(() => eventStream([partial(0), completed, partial(0), failed], false));
    const { requestId, frames } = await generate("scripted", 2, 1);
    expect(frames.map((f) => f.name)).toEqual(["image.partial_image", "image.partial_image", "error"]);
    expect(await storedRecords(requestId)).toEqual([
      { generations: 2, usage_source: "counted", status: 200 },
    ]);
  });

  test("the client goes away after the first progress image: 1 generation", async () => {
    scripted.answer(() => eventStream([partial(0)], true));
    const { requestId, frames } = await generate("scripted", 2, 3, 1);
    expect(frames.map((f) => f.name)).toEqual(["image.partial_image"]);
    expect(await storedRecords(requestId)).toEqual([
      { generations: 1, usage_source: "counted", status: 200 },
    ]);
  });

  test("a non-stream request whose upstream fails after its first image: 502, nothing billed", async () => {
    const failed = event("error", { error: { message: "the image could not be generated", code: null } });
    scripted.answer(() => eventStream([completed, failed], false));
    const requestId = `img-${process.pid}-${++seq}`;
    const body = { model: MODEL.scripted, prompt: "a kite", size: "32x32", n: 2 };
    const response = await postGeneration(body, requestId);
    expect(response.status).toBe(502);
    const records = await storedRecords(requestId);
    expect(records.map((r) => [r.generations, r.usage_source, r.status])).toEqual([[0, "none", 502]]);
  });

  test("nothing sent at all: an error event, nothing billed", async () => {
    scripted.answer(() => eventStream([], false));
    const { requestId, frames } = await generate("scripted", 1, 0);
    expect(frames.map((f) => f.name)).toEqual(["error"]);
    const records = await storedRecords(requestId);
    expect(records.map((r) => [r.generations, r.usage_source])).toEqual([[0, "none"]]);
  });
});
