// A body under its cap: the buffer that holds it as it arrives, never past the cap, and the 413
// that refuses it (its reader, src/request/body.ts, and its decoder, src/request/encoding.ts, share them).
import { GatewayError } from "../wire/errors.ts";

/** 413 for a body over `cap` bytes (`how`: "once decompressed" when its decoding passed it). */
export function tooLarge(cap: number, how = ""): GatewayError {
  // The rest of the body is never read: the connection cannot carry another request.
  return new GatewayError(
    "too_large",
    `The request body is larger than ${cap} bytes${how === "" ? "" : ` ${how}`}, the most this endpoint reads. Shorten the input.`,
    { headers: { connection: "close" } },
  );
}

/**
 * Bytes copied as they arrive into one resizable buffer whose maximum is the cap: a body (or an
 * uploaded file) costs its own size once — no list of chunks joined at the end, which held it
 * twice — and memory grows with what arrived, not with what was declared beyond the cap.
 */
export class CappedBuffer {
  readonly #buffer: ArrayBuffer;
  #length = 0;

  /** `expected` bytes are made room for at once (a declared length; 0 when unknown). */
  constructor(cap: number, expected = 0) {
    this.#buffer = new ArrayBuffer(Math.min(cap, Math.max(expected, 0)), { maxByteLength: cap });
  }

  /** Adds `chunk`; false when the body would pass the cap (nothing is added then). */
  append(chunk: Uint8Array): boolean {
    const end = this.#length + chunk.byteLength;
    if (end > this.#buffer.maxByteLength) return false;
    if (end > this.#buffer.byteLength) {
      this.#buffer.resize(
        Math.min(this.#buffer.maxByteLength, Math.max(end, this.#buffer.byteLength * 2, 64 * 1024)),
      );
    }
    new Uint8Array(this.#buffer).set(chunk, this.#length);
    this.#length = end;
    return true;
  }

  bytes(): Uint8Array {
    return new Uint8Array(this.#buffer, 0, this.#length);
  }
}
