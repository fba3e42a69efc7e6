// Whole-file checks of uploaded images: valid PNG, JPEG and WebP files pass, and every truncation
// and a flipped byte in a PNG chunk are found before any decoder sees the file.
import { describe, expect, test } from "bun:test";
import { encodeImage } from "../../src/sim/images/codecs.ts";
import { sniffFormat } from "../../src/wire/images-sniff.ts";
import { structureProblem } from "../../src/wire/images-structure.ts";
import { makePng } from "./images-fixtures.ts";

const pixel = (x: number, y: number): [number, number, number, number] => [x * 7, y * 5, (x + y) % 256, 255];

async function samples(): Promise<Record<string, Uint8Array>> {
  const data = new Uint8Array(24 * 16 * 4);
  for (let i = 0; i < data.length; i += 4) data.set(pixel((i / 4) % 24, Math.floor(i / 96)), i);
  const raster = { width: 24, height: 16, data };
  return {
    png: makePng(24, 16, pixel),
    jpeg: await encodeImage(raster, "jpeg", 80),
    webp: await encodeImage(raster, "webp", 80),
  };
}

test("the WebP codec leaves no browser `location` behind (its glue sets one; URL resolution then throws)", async () => {
  await samples();
  expect("location" in globalThis).toBe(false);
});

describe("image structure", () => {
  test("complete files of every format pass", async () => {
    for (const [format, bytes] of Object.entries(await samples())) {
      expect(sniffFormat(bytes)).toBe(format as "png");
      expect(structureProblem(bytes, format as "png")).toBeUndefined();
    }
  });

  test("every truncation past the magic bytes is found", async () => {
    for (const [format, bytes] of Object.entries(await samples())) {
      for (let cut = 12; cut < bytes.length; cut++) {
        const problem = structureProblem(bytes.subarray(0, cut), format as "png");
        if (problem === undefined) throw new Error(`${format} cut at ${cut} of ${bytes.length} passed`);
      }
    }
  });

  test("a corrupted PNG chunk is found by its CRC", () => {
    const png = makePng(8, 8, pixel).slice();
    png[40] = (png[40] ?? 0) ^ 0xff;
    expect(structureProblem(png, "png")).toContain("CRC");
  });
});
