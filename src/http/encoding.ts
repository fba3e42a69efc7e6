// Request bodies sent compressed: the codings of `Content-Encoding` undone before the body is
// parsed, each one's output capped while it inflates (a few KB that would inflate to gigabytes are
// refused with 413 once the cap is passed, having cost no more than the cap). gzip, deflate, br
// and zstd are decoded, as the providers' APIs do (OpenAI's Codex CLI sends Responses requests
// zstd-compressed; Anthropic's API takes gzip); any other coding is 415 naming the header.
import zlib from "node:zlib";
import { GatewayError } from "../wire/errors.ts";
import { CappedBuffer, tooLarge } from "./capped.ts";

type Decoder = () => zlib.Gzip | zlib.Inflate | zlib.BrotliDecompress | zlib.ZstdDecompress;

const DECODERS: Readonly<Record<string, Decoder>> = {
  gzip: () => zlib.createGunzip(),
  "x-gzip": () => zlib.createGunzip(),
  deflate: () => zlib.createInflate(),
  br: () => zlib.createBrotliDecompress(),
  zstd: () => zlib.createZstdDecompress(),
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

function inflate(bytes: Uint8Array, coding: string, cap: number): Promise<Uint8Array> {
  const decoder = DECODERS[coding];
  if (decoder === undefined) return Promise.reject(new Error(`no decoder for ${coding}`));
  return new Promise((resolve, reject) => {
    const out = new CappedBuffer(cap);
    const stream = decoder();
    stream.on("data", (chunk: Buffer) => {
      if (out.append(chunk)) return;
      stream.destroy();
      reject(tooLarge(cap, `once decompressed (Content-Encoding: ${coding})`));
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
    stream.on("end", () => resolve(out.bytes()));
    stream.end(bytes);
  });
}
