// Image file recognition from bytes alone: format by magic bytes (PNG, JPEG, WebP), dimensions
// and alpha from the headers — never from a filename or a declared content type, and before any
// decoding, so a file claiming huge dimensions is refused before memory is spent on it.

export type ImageFormat = "png" | "jpeg" | "webp";

export interface ImageInfo {
  format: ImageFormat;
  width: number;
  height: number;
  /** The file can carry transparency (PNG colour type with alpha or a tRNS chunk, WebP alpha). */
  hasAlpha: boolean;
}

/** Largest decoded image accepted: 64 MiB of RGBA. */
export const MAX_PIXELS = 4096 * 4096;
export const MAX_DECODE_SIDE = 8192;

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

const u16be = (b: Uint8Array, at: number) => ((b[at] ?? 0) << 8) | (b[at + 1] ?? 0);
const u16le = (b: Uint8Array, at: number) => (b[at] ?? 0) | ((b[at + 1] ?? 0) << 8);
const u24le = (b: Uint8Array, at: number) => u16le(b, at) | ((b[at + 2] ?? 0) << 16);
const u32be = (b: Uint8Array, at: number) => u16be(b, at) * 65536 + u16be(b, at + 2);
const ascii = (b: Uint8Array, at: number, len: number) => String.fromCharCode(...b.subarray(at, at + len));

/** The format by magic bytes, or undefined for anything else. */
export function sniffFormat(bytes: Uint8Array): ImageFormat | undefined {
  if (PNG_SIGNATURE.every((x, i) => bytes[i] === x)) return "png";
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return "jpeg";
  if (bytes.length >= 12 && ascii(bytes, 0, 4) === "RIFF" && ascii(bytes, 8, 4) === "WEBP") return "webp";
  return undefined;
}

const HEADER_READERS: Record<ImageFormat, (bytes: Uint8Array) => ImageInfo | undefined> = {
  png: sniffPng,
  jpeg: sniffJpeg,
  webp: sniffWebp,
};

/** Format, dimensions and alpha read from the headers; undefined when the headers are not readable. */
export function sniffImage(bytes: Uint8Array): ImageInfo | undefined {
  const format = sniffFormat(bytes);
  return format === undefined ? undefined : HEADER_READERS[format](bytes);
}

function sniffPng(b: Uint8Array): ImageInfo | undefined {
  if (b.length < 33 || ascii(b, 12, 4) !== "IHDR") return undefined;
  const colorType = b[25] ?? 0;
  let hasAlpha = colorType === 4 || colorType === 6;
  // A tRNS chunk before the first IDAT gives alpha to grey, RGB and palette images.
  for (let at = 8; !hasAlpha && at + 8 <= b.length; ) {
    const type = ascii(b, at + 4, 4);
    if (type === "IDAT" || type === "IEND") break;
    if (type === "tRNS") hasAlpha = true;
    at += 12 + u32be(b, at);
  }
  return { format: "png", width: u32be(b, 16), height: u32be(b, 20), hasAlpha };
}

const SOF = new Set([0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf]);

function sniffJpeg(b: Uint8Array): ImageInfo | undefined {
  let at = 2;
  while (at + 9 < b.length) {
    if (b[at] !== 0xff) return undefined;
    const marker = b[at + 1] ?? 0;
    if (marker === 0xff) {
      at += 1; // fill byte
      continue;
    }
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      at += 2;
      continue;
    }
    if (SOF.has(marker)) {
      return { format: "jpeg", height: u16be(b, at + 5), width: u16be(b, at + 7), hasAlpha: false };
    }
    if (marker === 0xd9 || marker === 0xda) return undefined; // end or scan before any frame header
    at += 2 + u16be(b, at + 2);
  }
  return undefined;
}

function sniffWebp(b: Uint8Array): ImageInfo | undefined {
  if (b.length < 30) return undefined;
  const chunk = ascii(b, 12, 4);
  if (chunk === "VP8 ") {
    if (b[23] !== 0x9d || b[24] !== 0x01 || b[25] !== 0x2a) return undefined;
    return { format: "webp", width: u16le(b, 26) & 0x3fff, height: u16le(b, 28) & 0x3fff, hasAlpha: false };
  }
  if (chunk === "VP8L") {
    if (b[20] !== 0x2f) return undefined;
    const bits = ((b[21] ?? 0) | ((b[22] ?? 0) << 8) | ((b[23] ?? 0) << 16) | ((b[24] ?? 0) << 24)) >>> 0;
    return {
      format: "webp",
      width: (bits & 0x3fff) + 1,
      height: ((bits >>> 14) & 0x3fff) + 1,
      hasAlpha: ((bits >>> 28) & 1) === 1,
    };
  }
  if (chunk === "VP8X") {
    const hasAlpha = ((b[20] ?? 0) & 0x10) !== 0;
    return { format: "webp", width: u24le(b, 24) + 1, height: u24le(b, 27) + 1, hasAlpha };
  }
  return undefined;
}

/** Why an image's dimensions are refused before decoding, or undefined when they are acceptable. */
export function dimensionProblem(info: ImageInfo): string | undefined {
  const { width, height } = info;
  if (width < 1 || height < 1) return `its header gives an empty size ${width}x${height}`;
  if (width > MAX_DECODE_SIDE || height > MAX_DECODE_SIDE || width * height > MAX_PIXELS) {
    return `its header claims ${width}x${height} pixels; at most ${MAX_DECODE_SIDE} per side and ${MAX_PIXELS} pixels in all are accepted`;
  }
  return undefined;
}
