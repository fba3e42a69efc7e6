// Whether an uploaded image file is whole: its container structure is walked (PNG chunks with
// their CRCs up to IEND, JPEG segments up to the end-of-image marker, the WebP RIFF size and its
// chunks) without decoding pixels, so a truncated or corrupted upload is refused with 400 at the
// edge whichever upstream would have received it, instead of failing later inside a decoder.
import type { ImageFormat } from "./images-sniff.ts";

const u16be = (b: Uint8Array, at: number) => ((b[at] ?? 0) << 8) | (b[at + 1] ?? 0);
const u32be = (b: Uint8Array, at: number) => u16be(b, at) * 65536 + u16be(b, at + 2);
const u32le = (b: Uint8Array, at: number) =>
  ((b[at] ?? 0) | ((b[at + 1] ?? 0) << 8) | ((b[at + 2] ?? 0) << 16)) + (b[at + 3] ?? 0) * 16777216;
const ascii = (b: Uint8Array, at: number, len: number) => String.fromCharCode(...b.subarray(at, at + len));

const WALKERS: Record<ImageFormat, (bytes: Uint8Array) => string | undefined> = {
  png: pngProblem,
  jpeg: jpegProblem,
  webp: webpProblem,
};

/** What is wrong with the file's structure, or undefined when it is whole. */
export function structureProblem(bytes: Uint8Array, format: ImageFormat): string | undefined {
  return WALKERS[format](bytes);
}

function pngProblem(b: Uint8Array): string | undefined {
  let at = 8;
  let first = true;
  let sawData = false;
  while (at + 12 <= b.length) {
    const length = u32be(b, at);
    const type = ascii(b, at + 4, 4);
    const end = at + 12 + length;
    if (end > b.length) return `the PNG is truncated inside its ${type} chunk`;
    if (first && type !== "IHDR") return "the PNG does not start with an IHDR chunk";
    const crc = Bun.hash.crc32(b.subarray(at + 4, at + 8 + length));
    if (crc !== u32be(b, at + 8 + length)) return `the PNG's ${type} chunk is corrupted (CRC mismatch)`;
    if (type === "IDAT") sawData = true;
    if (type === "IEND") return sawData ? undefined : "the PNG has no image data (IDAT)";
    first = false;
    at = end;
  }
  return "the PNG is truncated (it ends before its IEND chunk)";
}

// Markers without a length field: TEM and RST0-7 (SOI and EOI are handled apart).
const STANDALONE = (marker: number) => marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7);

function jpegProblem(b: Uint8Array): string | undefined {
  let at = 2;
  let frame = false;
  while (at + 2 <= b.length) {
    if (b[at] !== 0xff) return "the JPEG is corrupted (a segment does not start with a marker)";
    const marker = b[at + 1] ?? 0;
    if (marker === 0xff) {
      at++; // fill byte
      continue;
    }
    if (marker === 0xd9) return frame ? undefined : "the JPEG has no frame header";
    if (STANDALONE(marker)) {
      at += 2;
      continue;
    }
    const length = u16be(b, at + 2);
    if (length < 2 || at + 2 + length > b.length) return "the JPEG is truncated inside a segment";
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc)
      frame = true;
    at += 2 + length;
    if (marker === 0xda) {
      // Entropy-coded data: runs until a marker other than a stuffed 0xFF00 or a restart marker.
      while (at + 1 < b.length && !(b[at] === 0xff && b[at + 1] !== 0 && !STANDALONE(b[at + 1] ?? 0))) at++;
      if (at + 1 >= b.length) return "the JPEG is truncated (it ends inside its image data)";
    }
  }
  return "the JPEG is truncated (it ends before its end-of-image marker)";
}

function webpProblem(b: Uint8Array): string | undefined {
  const riffEnd = 8 + u32le(b, 4);
  if (riffEnd > b.length) return "the WebP is truncated (shorter than its RIFF header says)";
  let at = 12;
  let sawImage = false;
  while (at + 8 <= riffEnd) {
    const type = ascii(b, at, 4);
    const size = u32le(b, at + 4);
    const end = at + 8 + size + (size % 2);
    if (at + 8 + size > riffEnd) return `the WebP is truncated inside its ${type.trim()} chunk`;
    if (type === "VP8 " || type === "VP8L") {
      if (size < 10) return `the WebP's ${type.trim()} chunk is too short to hold an image`;
      sawImage = true;
    }
    at = end;
  }
  return sawImage ? undefined : "the WebP has no image data (VP8 or VP8L chunk)";
}
