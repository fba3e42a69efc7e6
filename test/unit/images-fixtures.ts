// Test images for the image tests: PNGs made with pngjs, and decoding of any returned image.
import { PNG } from "pngjs";
import { decodeImage, type Raster } from "../../src/sim/images/codecs.ts";
import { type ImageInfo, sniffImage } from "../../src/wire/images-sniff.ts";

/** A PNG filled by `pixel(x, y)` → RGBA; `alpha: false` writes an RGB PNG (no alpha channel). */
export function makePng(
  width: number,
  height: number,
  pixel: (x: number, y: number) => [number, number, number, number],
  alpha = true,
): Uint8Array {
  const png = new PNG({ width, height });
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      png.data.set(pixel(x, y), (y * width + x) * 4);
    }
  }
  return new Uint8Array(PNG.sync.write(png, { colorType: alpha ? 6 : 2 }));
}

/** A flat opaque PNG. */
export const flatPng = (width: number, height: number): Uint8Array =>
  makePng(width, height, () => [10, 20, 30, 255]);

/** A mask whose left half is fully transparent (repaint) and right half opaque (keep). */
export const halfMask = (width: number, height: number): Uint8Array =>
  makePng(width, height, (x) => [0, 0, 0, x < width / 2 ? 0 : 255]);

/** Sniffs and decodes a base64 image; throws when it is not a readable PNG/JPEG/WebP. */
export async function decodeB64(b64: string): Promise<{ info: ImageInfo; raster: Raster }> {
  const bytes = new Uint8Array(Buffer.from(b64, "base64"));
  const info = sniffImage(bytes);
  if (!info) throw new Error(`not an image: ${b64.slice(0, 40)}`);
  return { info, raster: await decodeImage(bytes) };
}

/** How many pixels have alpha 0. */
export function transparentPixels(raster: Raster): number {
  let count = 0;
  for (let i = 3; i < raster.data.length; i += 4) if (raster.data[i] === 0) count++;
  return count;
}
