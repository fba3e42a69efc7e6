// Images endpoints against the compiled gateway (default config: every model on the in-process
// simulator): decoded results, streaming event counts, upload limits and validation errors.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as v from "valibot";
import { CompletedEventSchema, PartialEventSchema } from "../contract/images-schemas.ts";
import { type RunningGateway, startGateway } from "../helpers/gateway.ts";
import { readSse } from "../helpers/sse.ts";
import { decodeB64, flatPng, halfMask, makePng, transparentPixels } from "../unit/images-fixtures.ts";

let gw: RunningGateway;
let auth: Record<string, string>;

beforeAll(async () => {
  gw = await startGateway();
  auth = { authorization: `Bearer ${gw.key}` };
}, 30_000);
afterAll(async () => {
  await gw.dispose();
}, 30_000);

interface ImageResultBody {
  created: number;
  data: { b64_json?: string; url?: string }[];
  usage: { input_tokens: number; output_tokens: number; total_tokens: number };
}

function generate(body: Record<string, unknown>): Promise<Response> {
  return fetch(`${gw.url}/v1/images/generations`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ model: "modelx-image-2", prompt: "a red fox in snow", size: "64x64", ...body }),
  });
}

function edit(fields: Record<string, string>, files: Record<string, Uint8Array>): Promise<Response> {
  const form = new FormData();
  form.append("model", "modelx-image-2");
  form.append("prompt", "give it a hat");
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  for (const [name, bytes] of Object.entries(files)) form.append(name, new Blob([bytes]), `${name}.png`);
  return fetch(`${gw.url}/v1/images/edits`, { method: "POST", headers: auth, body: form });
}

/** The events of an image stream: each one's name and JSON payload (the settled cost comment skipped). */
async function sseEvents(response: Response): Promise<{ event: string; data: Record<string, unknown> }[]> {
  const { events } = await readSse(response);
  return events.map((e) => ({ event: e.event ?? "", data: JSON.parse(e.data) as Record<string, unknown> }));
}

async function errorOf(response: Response): Promise<{ status: number; param: unknown; message: string }> {
  const body = (await response.json()) as { error: { param: unknown; message: string } };
  return { status: response.status, param: body.error.param, message: body.error.message };
}

describe("POST /v1/images/generations", () => {
  test("standard sizes give real images of those sizes, b64_json only, with usage", async () => {
    for (const [size, quality] of [
      ["1024x1024", "low"],
      ["1536x1024", "low"],
      ["1024x1536", "low"],
    ] as const) {
      const response = await generate({ size, quality });
      expect(response.status).toBe(200);
      const body = (await response.json()) as ImageResultBody;
      expect(Number.isInteger(body.created)).toBe(true);
      expect(body.data).toHaveLength(1);
      expect(Object.keys(body.data[0] ?? {})).toEqual(["b64_json"]);
      const { info } = await decodeB64(body.data[0]?.b64_json ?? "");
      expect(`${info.width}x${info.height}`).toBe(size);
      expect(body.usage.total_tokens).toBe(body.usage.input_tokens + body.usage.output_tokens);
    }
  }, 60_000);

  test("each output_format decodes with its magic bytes; transparent backgrounds carry alpha", async () => {
    for (const [output_format, background] of [
      ["png", "transparent"],
      ["webp", "transparent"],
      ["jpeg", "opaque"],
    ] as const) {
      const body = (await (await generate({ output_format, background, n: 2 })).json()) as ImageResultBody;
      expect(body.data).toHaveLength(2);
      for (const item of body.data) {
        const { info, raster } = await decodeB64(item.b64_json ?? "");
        expect([info.format, raster.width, raster.height]).toEqual([output_format, 64, 64]);
        if (background === "transparent") expect(transparentPixels(raster)).toBeGreaterThan(0);
        else expect(transparentPixels(raster)).toBe(0);
      }
    }
  }, 60_000);

  test('response_format "url" is ignored: still b64_json, never a URL', async () => {
    const body = (await (await generate({ response_format: "url" })).json()) as ImageResultBody;
    expect(body.data[0]?.url).toBeUndefined();
    expect((await decodeB64(body.data[0]?.b64_json ?? "")).info.format).toBe("png");
  }, 60_000);

  test("streaming sends exactly partial_images progress events, then image.completed", async () => {
    for (const partial_images of [0, 1, 3]) {
      const response = await generate({ stream: true, partial_images });
      expect(response.headers.get("content-type")).toContain("text/event-stream");
      const events = await sseEvents(response);
      const names = events.map((e) => e.event);
      expect(names).toEqual([...Array(partial_images).fill("image.partial_image"), "image.completed"]);
      for (const [i, e] of events.entries()) {
        const schema = e.event === "image.completed" ? CompletedEventSchema : PartialEventSchema;
        expect(v.safeParse(schema, e.data).issues?.map((issue) => issue.message) ?? []).toEqual([]);
        // The JSON names the official event (what the openai SDKs switch on), the event line the gateway's own.
        expect(e.data.type).toBe(e.event.replace("image.", "image_generation."));
        if (e.event === "image.partial_image") {
          expect(e.data.index).toBe(i);
          expect(e.data.partial_image_index).toBe(i);
          expect(Number.isInteger(e.data.created_at)).toBe(true);
          expect((await decodeB64(String(e.data.b64_json))).info.width).toBe(64);
        }
      }
      const done = events.at(-1)?.data as unknown as ImageResultBody & { b64_json: string };
      expect(done.data).toHaveLength(1);
      expect(done.b64_json).toBe(done.data[0]?.b64_json ?? "");
      expect(done.usage.output_tokens).toBeGreaterThan(0);
    }
  }, 60_000);

  test("validation errors: empty prompt, transparent + jpeg, bad size, range, unknown and text models", async () => {
    expect(await errorOf(await generate({ prompt: "" }))).toMatchObject({ status: 400, param: "prompt" });
    expect(await errorOf(await generate({ background: "transparent", output_format: "jpeg" }))).toMatchObject(
      {
        status: 400,
        param: "background",
      },
    );
    expect(await errorOf(await generate({ size: "12x99999" }))).toMatchObject({ status: 400, param: "size" });
    expect(await errorOf(await generate({ n: 11 }))).toMatchObject({ status: 422, param: "n" });
    expect(await errorOf(await generate({ model: "modelx-image-3" }))).toMatchObject({
      status: 400,
      param: "model",
    });
    expect(await errorOf(await generate({ model: "modelx-5.5" }))).toMatchObject({
      status: 400,
      param: "model",
    });
    const malformed = await fetch(`${gw.url}/v1/images/generations`, {
      method: "POST",
      headers: auth,
      body: "{",
    });
    expect(malformed.status).toBe(400);
    const noKey = await fetch(`${gw.url}/v1/images/generations`, { method: "POST", body: "{}" });
    expect(noKey.status).toBe(401);
  }, 60_000);
});

describe("POST /v1/images/edits", () => {
  test("the mask rule holds over HTTP: opaque mask pixels unchanged, transparent ones repainted", async () => {
    const response = await edit({}, { image: flatPng(64, 64), mask: halfMask(64, 64) });
    expect(response.status).toBe(200);
    const body = (await response.json()) as ImageResultBody;
    const { raster } = await decodeB64(body.data[0]?.b64_json ?? "");
    let keptSame = 0;
    let repainted = 0;
    for (let y = 0; y < 64; y++) {
      for (let x = 0; x < 64; x++) {
        const i = (y * 64 + x) * 4;
        const same = [10, 20, 30, 255].every((v, c) => raster.data[i + c] === v);
        if (x >= 32 && same) keptSame++;
        if (x < 32 && !same) repainted++;
      }
    }
    expect(keptSame).toBe(32 * 64);
    expect(repainted).toBeGreaterThan(32 * 64 * 0.9);
  }, 60_000);

  test("without a mask the whole image is re-created; image[] works; output_format applies", async () => {
    const response = await edit({ output_format: "webp" }, { "image[]": flatPng(48, 32) });
    const body = (await response.json()) as ImageResultBody;
    const { info, raster } = await decodeB64(body.data[0]?.b64_json ?? "");
    expect([info.format, raster.width, raster.height]).toEqual(["webp", 48, 32]);
  }, 60_000);

  test("streaming edits send exactly partial_images progress events, then image.completed", async () => {
    const events = await sseEvents(
      await edit({ stream: "true", partial_images: "2" }, { image: flatPng(64, 64) }),
    );
    expect(events.map((e) => e.event)).toEqual([
      "image.partial_image",
      "image.partial_image",
      "image.completed",
    ]);
    for (const e of events) {
      const schema = e.event === "image.completed" ? CompletedEventSchema : PartialEventSchema;
      expect(v.safeParse(schema, e.data).issues?.map((issue) => issue.message) ?? []).toEqual([]);
    }
    expect(events.map((e) => e.data.type)).toEqual([
      "image_edit.partial_image",
      "image_edit.partial_image",
      "image_edit.completed",
    ]);
  }, 60_000);

  test("20 MB + 1 byte image or mask is 413; each file is checked separately", async () => {
    const big = new Uint8Array(20_000_001);
    big.set(flatPng(8, 8));
    const image = await errorOf(await edit({}, { image: big }));
    expect(image).toMatchObject({ status: 413, param: "image" });
    const mask = await errorOf(await edit({}, { image: flatPng(8, 8), mask: big }));
    expect(mask).toMatchObject({ status: 413, param: "mask" });
  }, 60_000);

  test("mask of other dimensions or without alpha is 400 (not 422)", async () => {
    const size = await errorOf(await edit({}, { image: flatPng(64, 64), mask: halfMask(32, 64) }));
    expect(size).toMatchObject({ status: 400, param: "mask" });
    expect(size.message).toContain("32x64");
    const noAlpha = makePng(64, 64, () => [0, 0, 0, 255], false);
    expect(await errorOf(await edit({}, { image: flatPng(64, 64), mask: noAlpha }))).toMatchObject({
      status: 400,
      param: "mask",
    });
  }, 60_000);

  test("missing image, non-image file, empty prompt and transparent + jpeg are 400", async () => {
    expect(await errorOf(await edit({}, {}))).toMatchObject({ status: 400, param: "image" });
    const text = new TextEncoder().encode("just text, named .png");
    expect(await errorOf(await edit({}, { image: text }))).toMatchObject({ status: 400, param: "image" });
    const form = new FormData();
    form.append("model", "modelx-image-2");
    form.append("prompt", "");
    form.append("image", new Blob([flatPng(8, 8)]), "a.png");
    const empty = await fetch(`${gw.url}/v1/images/edits`, { method: "POST", headers: auth, body: form });
    expect(await errorOf(empty)).toMatchObject({ status: 400, param: "prompt" });
    const conflict = await edit(
      { background: "transparent", output_format: "jpeg" },
      { image: flatPng(8, 8) },
    );
    expect(await errorOf(conflict)).toMatchObject({ status: 400, param: "background" });
  }, 60_000);
});
