// The OpenAI-style images adapter over the wire: the gateway (compiled binary) routes image
// models to the simulator running as an HTTP upstream (`modelgate sim`), whose streams use the
// real API's event names (image_generation.* / image_edit.*), mapped to image.* for the client.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Subprocess } from "bun";
import { binary, type RunningGateway, startGateway } from "../helpers/gateway.ts";
import { decodeB64, flatPng, halfMask } from "../unit/images-fixtures.ts";

let sim: Subprocess<"ignore", "pipe", "pipe">;
let simUrl: string;
let gw: RunningGateway;
let auth: Record<string, string>;

async function startSim(): Promise<string> {
  sim = Bun.spawn([binary(), "sim", "--listen", "127.0.0.1:0", "--seed", "3"], {
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const reader = sim.stderr.getReader();
  let text = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`simulator exited:\n${text}`);
    text += new TextDecoder().decode(value);
    const url = /"msg":"simulator listening","url":"([^"]+)"/.exec(text)?.[1];
    if (url) {
      reader.releaseLock();
      return url;
    }
  }
}

beforeAll(async () => {
  simUrl = await startSim();
  // The first channel is unreachable: the gateway fails over to the second before sending anything.
  gw = await startGateway({
    config: `
[[channels]]
kind = "openai-images"
name = "dead"
base_url = "http://127.0.0.1:9/v1"
models = ["modelx-image-*"]

[[channels]]
kind = "openai-images"
name = "sim-http"
base_url = "${simUrl}/v1"
models = ["modelx-image-*"]
`,
  });
  auth = { authorization: `Bearer ${gw.key}` };
}, 30_000);

afterAll(async () => {
  await gw.dispose();
  sim.kill("SIGTERM");
  await sim.exited;
}, 30_000);

describe("openai-images upstream over HTTP", () => {
  test("the simulator speaks the real API's stream event names", async () => {
    const response = await fetch(`${simUrl}/v1/images/generations`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "x", prompt: "p", size: "32x32", stream: true, partial_images: 1 }),
    });
    const names = [...(await response.text()).matchAll(/^event: (.+)$/gm)].map((m) => m[1]);
    expect(names).toEqual(["image_generation.partial_image", "image_generation.completed"]);
  }, 60_000);

  test("generation through the adapter: JSON result with a decodable image and the upstream's usage", async () => {
    const response = await fetch(`${gw.url}/v1/images/generations`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({
        model: "modelx-image-1.5",
        prompt: "a kite",
        size: "48x48",
        output_format: "webp",
      }),
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      data: { b64_json: string }[];
      usage: { output_tokens: number };
    };
    const { info } = await decodeB64(body.data[0]?.b64_json ?? "");
    expect([info.format, info.width, info.height]).toEqual(["webp", 48, 48]);
    expect(body.usage.output_tokens).toBeGreaterThan(0);
  }, 60_000);

  test("streamed generation: image_generation.* mapped to exactly N image.partial_image then image.completed", async () => {
    const response = await fetch(`${gw.url}/v1/images/generations`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({
        model: "modelx-image-2",
        prompt: "a kite",
        size: "32x32",
        stream: true,
        partial_images: 3,
      }),
    });
    const text = await response.text();
    const names = [...text.matchAll(/^event: (.+)$/gm)].map((m) => m[1]);
    expect(names).toEqual([
      "image.partial_image",
      "image.partial_image",
      "image.partial_image",
      "image.completed",
    ]);
    const types = [...text.matchAll(/^data: (.+)$/gm)].map(
      (m) => (JSON.parse(m[1] ?? "{}") as { type: string }).type,
    );
    expect(types).toEqual(names.map((name) => String(name).replace("image.", "image_generation.")));
  }, 60_000);

  test("streamed edit with a mask through the adapter keeps the opaque half pixel for pixel", async () => {
    const form = new FormData();
    form.append("model", "modelx-image-2");
    form.append("prompt", "paint the left half");
    form.append("stream", "true");
    form.append("partial_images", "1");
    form.append("image", new Blob([flatPng(32, 32)]), "in.png");
    form.append("mask", new Blob([halfMask(32, 32)]), "mask.png");
    const response = await fetch(`${gw.url}/v1/images/edits`, { method: "POST", headers: auth, body: form });
    const text = await response.text();
    expect([...text.matchAll(/^event: (.+)$/gm)].map((m) => m[1])).toEqual([
      "image.partial_image",
      "image.completed",
    ]);
    const completed = /^data: (\{"type":"image_edit.completed".+)$/m.exec(text)?.[1] ?? "{}";
    const result = JSON.parse(completed) as { data: { b64_json: string }[] };
    const { raster } = await decodeB64(result.data[0]?.b64_json ?? "");
    for (let y = 0; y < 32; y++) {
      for (let x = 16; x < 32; x++) {
        const i = (y * 32 + x) * 4;
        expect(Array.from(raster.data.subarray(i, i + 4))).toEqual([10, 20, 30, 255]);
      }
    }
  }, 60_000);
});
