// Request bodies sent compressed: the codings of `Content-Encoding` undone before the body is
// parsed, each one's output capped while it inflates (a few KB that would inflate to gigabytes are
// refused with 413 once the cap is passed, having cost no more than inflating up to the cap and
// holding none of it; a gzip body whose trailer declares more, before inflating any). gzip, deflate, br and zstd are decoded, as the providers' APIs do (OpenAI's
// Codex CLI sends Responses requests zstd-compressed; Anthropic's API takes gzip); any other
// coding is 415 naming the header.
import zlib from "node:zlib";
import { GatewayError } from "../wire/errors.ts";
import { tooLarge } from "./capped.ts";

type Decoder = () => zlib.Gzip | zlib.Inflate | zlib.BrotliDecompress | zlib.ZstdDecompress;

// Output in 256 KiB pieces instead of zlib's 16 KiB: a 32 MiB body is 128 events on the event
// loop, not 2,048 (inflating one took 40-50 ms instead of 120-200 ms).
const CHUNK = { chunkSize: 256 * 1024 };

const DECODERS: Readonly<Record<string, Decoder>> = {
  gzip: () => zlib.createGunzip(CHUNK),
  "x-gzip": () => zlib.createGunzip(CHUNK),
  deflate: () => zlib.createInflate(CHUNK),
  br: () => zlib.createBrotliDecompress(CHUNK),
  zstd: () => zlib.createZstdDecompress(CHUNK),
};

/** At most this many codings are undone (a body compressed twice is legal; ten times is not a client). */
const MAX_CODINGS = 2;

/** The codings applied to the body, in the order they were applied; `identity` is none. */
export function contentCodings(headers: Headers): string[] {
  const header = headers.get("content-encoding");
  if (header === null) return [];
  const codings = header
    .split(",")
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== "" && c !== "identity");
  const unknown = codings.find((c) => DECODERS[c] === undefined);
  if (unknown !== undefined || codings.length > MAX_CODINGS) {
    throw new GatewayError(
      "unsupported_encoding",
      `Content-Encoding: ${header} is not accepted: send the body uncompressed, or compressed once with gzip, deflate, br or zstd.`,
      { param: "Content-Encoding" },
    );
  }
  return codings;
}

/** `bytes` with `codings` undone (the last applied first), every step's output under `cap`. */
export async function decodeBody(
  bytes: Uint8Array,
  codings: readonly string[],
  cap: number,
): Promise<Uint8Array> {
  let body = bytes;
  for (const coding of [...codings].reverse()) body = await inflate(body, coding, cap);
  return body;
}

/**
 * One coding undone in two passes: the first only measures the output (refusing it past `cap`,
 * holding none of it), the second fills a buffer of exactly that size. A bomb then costs the CPU
 * of inflating up to the cap and no memory (one pass that kept its output held up to the cap per
 * bomb until the next collection: 100 bombs in 8 s took the gateway to 1.9 GB); an accepted body
 * is inflated twice, which compressed bodies, rare and small, can afford.
 */
async function inflate(bytes: Uint8Array, coding: string, cap: number): Promise<Uint8Array> {
  const declared = coding.endsWith("gzip") ? gzipDeclaredSize(bytes) : undefined;
  if (declared !== undefined && declared > cap)
    throw tooLarge(
      cap,
      `once decompressed (Content-Encoding: ${coding}; its trailer gives ${declared} bytes)`,
    );
  let size = 0;
  const whole = await pass(bytes, coding, (chunk) => {
    size += chunk.byteLength;
    return size <= cap;
  });
  if (!whole) throw tooLarge(cap, `once decompressed (Content-Encoding: ${coding})`);
  const out = new Uint8Array(size);
  let at = 0;
  await pass(bytes, coding, (chunk) => {
    out.set(chunk.subarray(0, Math.min(chunk.byteLength, size - at)), at);
    at += chunk.byteLength;
    return at <= size;
  });
  return out;
}

/**
 * The size a gzip body says it inflates to: its last member's trailer (ISIZE, the size modulo
 * 2^32), which the whole is never less than. A bomb made by any gzip tool is then refused before a
 * byte is inflated (100 of 64 KB each took ~5 ms of CPU and 32 MiB of buffers apiece, which the
 * event loop's heap collected later); one with a forged trailer costs the inflating up to the cap.
 */
function gzipDeclaredSize(bytes: Uint8Array): number | undefined {
  // A member is at least a 10-byte header and an 8-byte trailer, and starts with 1f 8b.
  if (bytes.byteLength < 18 || bytes[0] !== 0x1f || bytes[1] !== 0x8b) return undefined;
  return new DataView(bytes.buffer, bytes.byteOffset + bytes.byteLength - 4, 4).getUint32(0, true);
}

/** Streams `bytes` through the decoder of `coding`; `take` gets each piece, false stops (resolves false). */
function pass(bytes: Uint8Array, coding: string, take: (chunk: Buffer) => boolean): Promise<boolean> {
  const decoder = DECODERS[coding];
  if (decoder === undefined) return Promise.reject(new Error(`no decoder for ${coding}`));
  return new Promise((resolve, reject) => {
    const stream = decoder();
    stream.on("data", (chunk: Buffer) => {
      if (take(chunk)) return;
      stream.destroy();
      resolve(false);
    });
    stream.on("error", (error: Error) =>
      reject(
        new GatewayError(
          "invalid_request",
          `The request body is not valid ${coding} data (Content-Encoding: ${coding}): ${error.message}. Send it compressed with ${coding}, or uncompressed without the header.`,
          { param: "Content-Encoding" },
        ),
      ),
    );
    stream.on("end", () => resolve(true));
    stream.end(bytes);
  });
}
