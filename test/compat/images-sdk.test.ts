// The official OpenAI TypeScript SDK against the running gateway: generate, stream, and edit
// with and without a mask (the SDK sends multipart with its own field names). Streams are read
// as the SDK types them (ImageGenStreamEvent / ImageEditStreamEvent): partial events with
// `partial_image_index`, and a completed event whose top-level `b64_json` is the final image,
// through the in-process simulator (modelx-image-2) and through an `openai-images` channel to
// the simulator over HTTP (modelx-image-1.5).
import { describe, expect, test } from "bun:test";
import { toFile } from "openai";
import { sdkRig } from "../helpers/sdk-rig.ts";
import { decodeB64, flatPng, halfMask } from "../unit/images-fixtures.ts";

const rig = sdkRig({
  inProcess: ["modelx-image-2"],
  overHttp: ["modelx-image-1.5"],
  kind: "openai-images",
});

const CHANNELS = [
  { label: "sim channel", model: "modelx-image-2" },
  { label: "openai-images channel", model: "modelx-image-1.5" },
];

describe("openai SDK images", () => {
  test("images.generate returns b64_json images", async () => {
    const result = await rig.client.images.generate({
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

  test.each(CHANNELS)(
    "$label: images.generate streamed yields 2 partials then the final image at the top level",
    async ({ model }) => {
      const stream = await rig.client.images.generate({
        model,
        prompt: "a paper boat",
        size: "1024x1536",
        quality: "low",
        output_format: "webp",
        stream: true,
        partial_images: 2,
      });
      const partials: number[] = [];
      let final: string | undefined;
      let events = 0;
      for await (const event of stream) {
        events++;
        if (event.type === "image_generation.partial_image") {
          partials.push(event.partial_image_index);
          expect(event).toMatchObject({ size: "1024x1536", quality: "low", output_format: "webp" });
          expect((await decodeB64(event.b64_json)).info.format).toBe("webp");
        }
        if (event.type === "image_generation.completed") {
          final = event.b64_json;
          expect(event.usage.total_tokens).toBeGreaterThan(0);
          expect(event.usage.input_tokens_details.text_tokens).toBeGreaterThan(0);
          expect(event).toMatchObject({ size: "1024x1536", quality: "low", background: "opaque" });
        }
      }
      expect(events).toBe(3);
      expect(partials).toEqual([0, 1]);
      const { info } = await decodeB64(final ?? "");
      expect([info.format, info.width, info.height]).toEqual(["webp", 1024, 1536]);
    },
    60_000,
  );

  test.each(CHANNELS)(
    "$label: images.edit streamed yields the partials and the edited image",
    async ({ model }) => {
      const stream = await rig.client.images.edit({
        model,
        prompt: "add a moon on the left",
        image: await toFile(flatPng(64, 64), "photo.png", { type: "image/png" }),
        mask: await toFile(halfMask(64, 64), "mask.png", { type: "image/png" }),
        stream: true,
        partial_images: 2,
      });
      const types: string[] = [];
      let final: string | undefined;
      for await (const event of stream) {
        types.push(event.type);
        if (event.type === "image_edit.completed") final = event.b64_json;
      }
      expect(types).toEqual(["image_edit.partial_image", "image_edit.partial_image", "image_edit.completed"]);
      const { info, raster } = await decodeB64(final ?? "");
      expect([info.format, info.width, info.height]).toEqual(["png", 64, 64]);
      const i = (10 * 64 + 50) * 4; // a pixel in the opaque (kept) half of the mask
      expect(Array.from(raster.data.subarray(i, i + 4))).toEqual([10, 20, 30, 255]);
    },
    60_000,
  );

  test("images.edit without and with a mask", async () => {
    const plain = await rig.client.images.edit({
      model: "modelx-image-2",
      prompt: "make it a sunset",
      image: await toFile(flatPng(64, 64), "photo.png", { type: "image/png" }),
    });
    expect((await decodeB64(plain.data?.[0]?.b64_json ?? "")).info).toMatchObject({ width: 64, height: 64 });

    const masked = await rig.client.images.edit({
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
    const badMask = rig.client.images.edit({
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
    expect(await statusOf(rig.client.images.generate({ model: "modelx-image-2", prompt: "" }))).toBe(400);
  }, 60_000);
});
