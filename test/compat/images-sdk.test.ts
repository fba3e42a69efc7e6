// The official OpenAI TypeScript SDK against the running gateway: generate, stream, and edit
// with and without a mask (the SDK sends multipart with its own field names).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI, { toFile } from "openai";
import { type RunningGateway, startGateway } from "../helpers/gateway.ts";
import { decodeB64, flatPng, halfMask } from "../unit/images-fixtures.ts";

let gw: RunningGateway;
let client: OpenAI;

beforeAll(async () => {
  gw = await startGateway();
  client = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
}, 30_000);
afterAll(async () => {
  await gw.dispose();
}, 30_000);

describe("openai SDK images", () => {
  test("images.generate returns b64_json images", async () => {
    const result = await client.images.generate({
      model: "modelx-image-2",
      prompt: "a paper boat",
      size: "1024x1024",
      quality: "low",
      output_format: "jpeg",
      n: 1,
    });
    const b64 = result.data?.[0]?.b64_json ?? "";
    const { info } = await decodeB64(b64);
    expect([info.format, info.width, info.height]).toEqual(["jpeg", 1024, 1024]);
    expect(result.usage?.total_tokens).toBeGreaterThan(0);
  }, 60_000);

  test("images.generate with stream yields the progress events then the completed one", async () => {
    const stream = await client.images.generate({
      model: "modelx-image-2",
      prompt: "a paper boat",
      size: "1024x1024",
      quality: "low",
      stream: true,
      partial_images: 2,
    });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    expect(types).toEqual(["image.partial_image", "image.partial_image", "image.completed"]);
  }, 60_000);

  test("images.edit without and with a mask", async () => {
    const plain = await client.images.edit({
      model: "modelx-image-2",
      prompt: "make it a sunset",
      image: await toFile(flatPng(64, 64), "photo.png", { type: "image/png" }),
    });
    expect((await decodeB64(plain.data?.[0]?.b64_json ?? "")).info).toMatchObject({ width: 64, height: 64 });

    const masked = await client.images.edit({
      model: "modelx-image-2",
      prompt: "add a moon on the left",
      image: [await toFile(flatPng(64, 64), "photo.png", { type: "image/png" })],
      mask: await toFile(halfMask(64, 64), "mask.png", { type: "image/png" }),
      output_format: "png",
    });
    const { raster } = await decodeB64(masked.data?.[0]?.b64_json ?? "");
    const i = (10 * 64 + 50) * 4; // a pixel in the opaque (kept) half
    expect(Array.from(raster.data.subarray(i, i + 4))).toEqual([10, 20, 30, 255]);
  }, 60_000);

  test("SDK errors carry the gateway's status for a bad mask and an empty prompt", async () => {
    const badMask = client.images.edit({
      model: "modelx-image-2",
      prompt: "x",
      image: await toFile(flatPng(64, 64), "a.png"),
      mask: await toFile(halfMask(32, 32), "m.png"),
    });
    const statusOf = (p: PromiseLike<unknown>) =>
      Promise.resolve(p).then(
        () => 200,
        (e: { status?: number }) => e.status,
      );
    expect(await statusOf(badMask)).toBe(400);
    expect(await statusOf(client.images.generate({ model: "modelx-image-2", prompt: "" }))).toBe(400);
  }, 60_000);
});
