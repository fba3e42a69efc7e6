// The simulator's images: real encoded files of the asked size and format, compression,
// transparency, determinism, progress stages, and the mask rule pixel by pixel.
import { describe, expect, test } from "bun:test";
import { type SimImageEvent, simImages } from "../../src/sim/images/engine.ts";
import type { ImageOptions } from "../../src/wire/images.ts";
import { decodeB64, flatPng, halfMask, transparentPixels } from "./images-fixtures.ts";

const base: ImageOptions = {
  prompt: "a lighthouse at dusk",
  size: "64x64",
  quality: "auto",
  background: "auto",
  outputFormat: "png",
  outputCompression: 100,
  moderation: "auto",
  n: 1,
  stream: false,
  partialImages: 0,
  user: undefined,
  inputFidelity: undefined,
};

async function run(options: Partial<ImageOptions>, images: Uint8Array[] = [], mask?: Uint8Array, seed = 7) {
  const out: SimImageEvent[] = [];
  for await (const e of simImages({ seed, options: { ...base, ...options }, images, mask })) out.push(e);
  return out;
}

function finals(events: SimImageEvent[]): string[] {
  return events.filter((e) => e.type === "image").map((e) => e.b64);
}

describe("simulator images", () => {
  test("each format decodes with the asked dimensions; auto is 1024x1024", async () => {
    for (const outputFormat of ["png", "jpeg", "webp"] as const) {
      const [b64] = finals(await run({ outputFormat, size: "96x48" }));
      const { info, raster } = await decodeB64(b64 ?? "");
      expect({ format: info.format, width: raster.width, height: raster.height }).toEqual({
        format: outputFormat,
        width: 96,
        height: 48,
      });
    }
    const [auto] = finals(await run({ size: "auto", quality: "low" }));
    expect((await decodeB64(auto ?? "")).info).toMatchObject({ width: 1024, height: 1024 });
  });

  test("output_compression changes JPEG and WebP files", async () => {
    for (const outputFormat of ["jpeg", "webp"] as const) {
      const [high] = finals(await run({ outputFormat, outputCompression: 100, size: "128x128" }));
      const [low] = finals(await run({ outputFormat, outputCompression: 5, size: "128x128" }));
      expect((low ?? "").length).toBeLessThan((high ?? "").length);
    }
  });

  test("a transparent background gives transparent pixels in PNG and WebP; opaque gives none", async () => {
    for (const outputFormat of ["png", "webp"] as const) {
      const [b64] = finals(await run({ outputFormat, background: "transparent" }));
      const { info, raster } = await decodeB64(b64 ?? "");
      expect(info.hasAlpha).toBe(true);
      expect(transparentPixels(raster)).toBeGreaterThan(0);
      expect(transparentPixels(raster)).toBeLessThan(64 * 64);
    }
    const [opaque] = finals(await run({ background: "opaque" }));
    expect(transparentPixels((await decodeB64(opaque ?? "")).raster)).toBe(0);
  });

  test("deterministic from seed and prompt; n images differ from each other", async () => {
    expect(finals(await run({}))).toEqual(finals(await run({})));
    expect(finals(await run({}))).not.toEqual(finals(await run({ prompt: "a lighthouse at dawn" })));
    expect(finals(await run({}, [], undefined, 7))).not.toEqual(finals(await run({}, [], undefined, 8)));
    const two = finals(await run({ n: 2 }));
    expect(two).toHaveLength(2);
    expect(two[0]).not.toEqual(two[1]);
  });

  test("progress images come first, are coarser earlier stages, and converge on the final", async () => {
    const events = await run({ stream: true, partialImages: 3 });
    expect(events.map((e) => e.type)).toEqual(["partial", "partial", "partial", "image"]);
    const rasters = await Promise.all(events.map(async (e) => (await decodeB64(e.b64)).raster));
    const final = rasters[3];
    if (!final) throw new Error("no final");
    const distance = (r: { data: Uint8Array }) =>
      r.data.reduce((sum, v, i) => sum + Math.abs(v - (final.data[i] ?? 0)), 0);
    const distances = rasters.slice(0, 3).map(distance);
    expect(distances[0]).toBeGreaterThan(distances[1] ?? 0);
    expect(distances[1]).toBeGreaterThan(distances[2] ?? 0);
    expect(distances[2]).toBeGreaterThan(0);
  });

  test("edit with a mask repaints exactly the fully transparent mask pixels", async () => {
    const image = flatPng(64, 64);
    const [b64] = finals(await run({ prompt: "add a hat" }, [image], halfMask(64, 64)));
    const { raster } = await decodeB64(b64 ?? "");
    let kept = 0;
    let repainted = 0;
    for (let y = 0; y < 64; y++) {
      for (let x = 0; x < 64; x++) {
        const px = Array.from(raster.data.subarray((y * 64 + x) * 4, (y * 64 + x) * 4 + 4));
        const same = px.join() === [10, 20, 30, 255].join();
        if (x >= 32) {
          expect(px).toEqual([10, 20, 30, 255]);
          kept++;
        } else if (!same) repainted++;
      }
    }
    expect(kept).toBe(32 * 64);
    expect(repainted).toBeGreaterThan(32 * 64 * 0.9);
  });

  test("edit without a mask re-creates the whole image, keeping the reference's size on auto", async () => {
    const image = flatPng(80, 40);
    const [b64] = finals(await run({ size: "auto" }, [image]));
    const { raster } = await decodeB64(b64 ?? "");
    expect([raster.width, raster.height]).toEqual([80, 40]);
    let changed = 0;
    for (let i = 0; i < raster.data.length; i += 4) if (raster.data[i] !== 10) changed++;
    expect(changed).toBeGreaterThan(80 * 40 * 0.9);
  });

  test("a mask of other dimensions is refused by the simulator too", async () => {
    await expect(run({}, [flatPng(64, 64)], halfMask(32, 64))).rejects.toThrow(/mask is 32x64/);
  });
});
