// Deterministic image synthesis for the simulator: a picture made from the seed and prompt
// (gradient background, coloured shapes), earlier "progress" stages of it (coarser pixel
// blocks), re-creation from a reference image, and mask inpainting that repaints only pixels
// whose mask alpha is 0 and leaves every other pixel byte-identical.
import { hashString, Rng } from "../random.ts";
import type { Raster } from "./codecs.ts";

type Rgb = [number, number, number];

const color = (rng: Rng): Rgb => [rng.int(0, 255), rng.int(0, 255), rng.int(0, 255)];

/** A new picture for `prompt`; with `transparent`, the background has alpha 0. */
export function paint(
  seed: number,
  prompt: string,
  width: number,
  height: number,
  transparent: boolean,
): Raster {
  const rng = new Rng(hashString(prompt, seed));
  const data = new Uint8Array(width * height * 4);
  const top = color(rng);
  const bottom = color(rng);
  for (let y = 0; y < height; y++) {
    const t = height > 1 ? y / (height - 1) : 0;
    const r = Math.round(top[0] + (bottom[0] - top[0]) * t);
    const g = Math.round(top[1] + (bottom[1] - top[1]) * t);
    const b = Math.round(top[2] + (bottom[2] - top[2]) * t);
    for (let x = 0, i = y * width * 4; x < width; x++, i += 4) {
      data[i] = r;
      data[i + 1] = g;
      data[i + 2] = b;
      data[i + 3] = transparent ? 0 : 255;
    }
  }
  const shapes = rng.int(4, 8);
  for (let s = 0; s < shapes; s++) drawShape({ width, height, data }, rng);
  return { width, height, data };
}

function drawShape(raster: Raster, rng: Rng): void {
  const { width, height, data } = raster;
  const side = Math.min(width, height);
  const round = rng.next() < 0.5;
  const cx = rng.next() * width;
  const cy = rng.next() * height;
  const radius = Math.max(2, (0.08 + rng.next() * 0.22) * side);
  const fill = color(rng);
  const x0 = Math.max(0, Math.floor(cx - radius));
  const x1 = Math.min(width - 1, Math.ceil(cx + radius));
  const y0 = Math.max(0, Math.floor(cy - radius));
  const y1 = Math.min(height - 1, Math.ceil(cy + radius));
  for (let y = y0; y <= y1; y++) {
    for (let x = x0; x <= x1; x++) {
      if (round && (x - cx) ** 2 + (y - cy) ** 2 > radius * radius) continue;
      const i = (y * width + x) * 4;
      data[i] = fill[0];
      data[i + 1] = fill[1];
      data[i + 2] = fill[2];
      data[i + 3] = 255;
    }
  }
}

/** Progress image `index` (0 is the earliest): the final picture in coarse blocks, finer each step. */
export function stage(final: Raster, index: number): Raster {
  const { width, height } = final;
  const block = Math.max(2, Math.floor(Math.min(width, height) / 8) >> index);
  const data = new Uint8Array(final.data.length);
  for (let by = 0; by < height; by += block) {
    for (let bx = 0; bx < width; bx += block) {
      const sum = [0, 0, 0, 0];
      let count = 0;
      for (let y = by; y < Math.min(height, by + block); y++) {
        for (let x = bx, i = (y * width + bx) * 4; x < Math.min(width, bx + block); x++, i += 4) {
          for (let c = 0; c < 4; c++) sum[c] = (sum[c] ?? 0) + (final.data[i + c] ?? 0);
          count++;
        }
      }
      const mean = sum.map((v) => Math.round(v / count));
      for (let y = by; y < Math.min(height, by + block); y++) {
        for (let x = bx, i = (y * width + bx) * 4; x < Math.min(width, bx + block); x++, i += 4) {
          for (let c = 0; c < 4; c++) data[i + c] = mean[c] ?? 0;
        }
      }
    }
  }
  return { width, height, data };
}

/** Nearest-neighbour resampling; the same raster when the size already matches. */
export function resample(source: Raster, width: number, height: number): Raster {
  if (source.width === width && source.height === height) return source;
  const data = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++) {
    const sy = Math.min(source.height - 1, Math.floor((y * source.height) / height));
    for (let x = 0; x < width; x++) {
      const sx = Math.min(source.width - 1, Math.floor((x * source.width) / width));
      data.set(
        source.data.subarray((sy * source.width + sx) * 4, (sy * source.width + sx) * 4 + 4),
        (y * width + x) * 4,
      );
    }
  }
  return { width, height, data };
}

/** Re-creates a whole reference image towards a new picture; high fidelity keeps more of it. */
export function recreate(reference: Raster, painted: Raster, fidelity: "low" | "high"): Raster {
  const keep = fidelity === "high" ? 0.75 : 0.5;
  const data = new Uint8Array(painted.data.length);
  for (let i = 0; i < data.length; i++) {
    data[i] = Math.round((reference.data[i] ?? 0) * keep + (painted.data[i] ?? 0) * (1 - keep));
  }
  return { width: painted.width, height: painted.height, data };
}

/** Repaints exactly the pixels whose mask alpha is 0; every other pixel is copied unchanged. */
export function inpaint(reference: Raster, mask: Raster, painted: Raster): Raster {
  const data = new Uint8Array(reference.data);
  for (let i = 0; i < data.length; i += 4) {
    if (mask.data[i + 3] !== 0) continue;
    data[i] = painted.data[i] ?? 0;
    data[i + 1] = painted.data[i + 1] ?? 0;
    data[i + 2] = painted.data[i + 2] ?? 0;
    data[i + 3] = painted.data[i + 3] ?? 0;
  }
  return { width: reference.width, height: reference.height, data };
}
