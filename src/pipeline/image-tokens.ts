// What one image in a text request costs in input tokens, by the formula of the upstream family
// that will bill it, for the reservation (src/pipeline/input-bound.ts). The constants are the
// providers' published ones, as data:
// - OpenAI (images and vision guide, "Calculating costs"): `detail: "low"` is a fixed base; `high`
//   and `auto` (the default) scale the image to fit a 2048-pixel square, then its short side down
//   to 768, and add a price per 512-pixel tile to the base. `detail: "original"` sends the image
//   unscaled; it is bounded by the tiles of the unscaled image (never fewer tokens than 32-pixel
//   patches), and refused when the size is not known.
// - Anthropic (vision guide): about width × height / 750 tokens (28-pixel patches in the newer
//   text), after the image is scaled to the model's native resolution, which caps one image at
//   ~1,600 tokens (Opus 4.7's high resolution: 2576 pixels on the long edge, ~3.75 megapixels,
//   ~5,000 tokens).
// An image whose size cannot be read from the request (a URL, a file id, a format whose header
// is not recognised) is counted at its family's maximum. Every rounding goes up: a bound, never
// an estimate below the bill.
import { sniffImage } from "../wire/images-sniff.ts";

/** The billing families of image input: OpenAI's tiles, Anthropic's pixel area. */
export type VisionFormula = "openai" | "anthropic";

export interface ImageSize {
  width: number;
  height: number;
}

/** OpenAI's published tile formula. */
export const OPENAI_VISION = {
  base: 85,
  perTile: 170,
  tile: 512,
  fit: 2048,
  shortSide: 768,
  patch: 32,
} as const;

/** Anthropic's published area formula and the per-image caps of its native resolutions. */
export const ANTHROPIC_VISION = {
  pixelsPerToken: 750,
  patch: 28,
  standardCap: 1600,
  highResolutionCap: 5000,
} as const;

/** Catalog models served at Anthropic's high image resolution (Opus 4.7). */
const HIGH_RESOLUTION = new Set(["modelz-opus-4-7"]);

/** The most tiles a high-detail image can have after scaling: 2048 × 768 → 4 × 2. */
const MAX_TILES =
  Math.ceil(OPENAI_VISION.fit / OPENAI_VISION.tile) * Math.ceil(OPENAI_VISION.shortSide / OPENAI_VISION.tile);

/** The tiles of an image after OpenAI's two scaling steps (each only shrinks), rounded up. */
function openaiTiles(size: ImageSize): number {
  let { width, height } = size;
  const long = Math.max(width, height);
  if (long > OPENAI_VISION.fit) {
    width = Math.ceil((width * OPENAI_VISION.fit) / long);
    height = Math.ceil((height * OPENAI_VISION.fit) / long);
  }
  const short = Math.min(width, height);
  if (short > OPENAI_VISION.shortSide) {
    width = Math.ceil((width * OPENAI_VISION.shortSide) / short);
    height = Math.ceil((height * OPENAI_VISION.shortSide) / short);
  }
  return Math.ceil(width / OPENAI_VISION.tile) * Math.ceil(height / OPENAI_VISION.tile);
}

/**
 * OpenAI input tokens of one image, or undefined when no bound can be known (`original` detail
 * of an image whose size the request does not show).
 */
export function openaiImageTokens(
  detail: string | undefined,
  size: ImageSize | undefined,
): number | undefined {
  const { base, perTile, tile, patch } = OPENAI_VISION;
  if (detail === "low") return base;
  if (detail === "original") {
    if (size === undefined) return undefined;
    const tiles = Math.ceil(size.width / tile) * Math.ceil(size.height / tile);
    const patches = Math.ceil(size.width / patch) * Math.ceil(size.height / patch);
    return Math.max(base + perTile * tiles, patches);
  }
  return base + perTile * (size === undefined ? MAX_TILES : Math.min(MAX_TILES, openaiTiles(size)));
}

/** Anthropic input tokens of one image for `model` (the cap of its native resolution). */
export function anthropicImageTokens(model: string, size: ImageSize | undefined): number {
  const { pixelsPerToken, patch, standardCap, highResolutionCap } = ANTHROPIC_VISION;
  const cap = HIGH_RESOLUTION.has(model) ? highResolutionCap : standardCap;
  if (size === undefined) return cap;
  const area = Math.ceil((size.width * size.height) / pixelsPerToken);
  const patches = Math.ceil(size.width / patch) * Math.ceil(size.height / patch);
  return Math.min(cap, Math.max(area, patches));
}

// Enough of a base64 payload to reach a JPEG's frame header past a large EXIF block (64 KiB).
const HEADER_BASE64_CHARS = 87_384;

/** A GIF's logical screen size (the sniffer knows PNG, JPEG and WebP). */
function gifSize(bytes: Uint8Array): ImageSize | undefined {
  if (bytes.length < 10) return undefined;
  const signature = String.fromCharCode(...bytes.subarray(0, 6));
  if (signature !== "GIF87a" && signature !== "GIF89a") return undefined;
  const u16 = (at: number) => (bytes[at] ?? 0) | ((bytes[at + 1] ?? 0) << 8);
  return { width: u16(6), height: u16(8) };
}

/** The pixel size of inline base64 image data, read from its header; undefined when unreadable. */
export function base64ImageSize(data: string): ImageSize | undefined {
  const head = Buffer.from(data.slice(0, HEADER_BASE64_CHARS), "base64");
  const bytes = new Uint8Array(head.buffer, head.byteOffset, head.byteLength);
  const info = sniffImage(bytes);
  const size = info === undefined ? gifSize(bytes) : { width: info.width, height: info.height };
  return size !== undefined && size.width > 0 && size.height > 0 ? size : undefined;
}

/** The pixel size of an image URL when it is a base64 `data:` URL with a readable header. */
export function urlImageSize(url: string): ImageSize | undefined {
  if (!url.startsWith("data:")) return undefined;
  const comma = url.indexOf(",");
  if (comma < 0 || !url.slice(0, comma).endsWith(";base64")) return undefined;
  return base64ImageSize(url.slice(comma + 1, comma + 1 + HEADER_BASE64_CHARS));
}
