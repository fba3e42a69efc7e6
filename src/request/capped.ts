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

/** The request's declared body length (Content-Length), or `otherwise` when it declares none. */
export function declaredLength(request: Request, otherwise: number): number {
  const declared = Number(request.headers.get("content-length") ?? Number.NaN);
  return Number.isFinite(declared) && declared >= 0 ? declared : otherwise;
}

/**
 * Bytes copied as they arrive into one resizable buffer whose maximum is the cap: a body (or an
 * uploaded file) costs its own size once — no list of chunks joined at the end, which held it
 * twice — and memory grows with what arrived, not with what was declared beyond the cap. The
 * buffer's maximum is reserved when it is made (address space, ~0.3 ms), so one that cannot
 * be longer than `atMost` (a declared length: the server frames the body by it) reserves only
 * that. With the cap as every body's maximum, each body over 64 KiB reserved 32 MiB and each
 * uploaded file 20 MB: the hostile soak's burst held 1.9 GB of reservations at once and the
 * allocator mapped two more 1 GiB arenas (docs/benchmarks.md). Passing `atMost` anyway (never,
 * under HTTP framing) moves the bytes once into a buffer that may grow to the cap.
 */
export class CappedBuffer {
  #buffer: ArrayBuffer;
  #length = 0;
  readonly #cap: number;

  /**
   * `expected` bytes are made room for at once (a declared length; 0 when unknown); the buffer
   * reserves room for `atMost` (at most the cap).
   */
  constructor(cap: number, expected = 0, atMost = cap) {
    this.#cap = cap;
    const most = Math.max(0, Math.min(cap, atMost));
    this.#buffer = new ArrayBuffer(Math.min(most, Math.max(expected, 0)), { maxByteLength: most });
  }

  /** Adds `chunk`; false when the body would pass the cap (nothing is added then). */
  append(chunk: Uint8Array): boolean {
    const end = this.#length + chunk.byteLength;
    if (end > this.#cap) return false;
    if (end > this.#buffer.byteLength) this.#grow(end);
    new Uint8Array(this.#buffer).set(chunk, this.#length);
    this.#length = end;
    return true;
  }

  bytes(): Uint8Array {
    return new Uint8Array(this.#buffer, 0, this.#length);
  }

  #grow(end: number): void {
    const size = Math.min(this.#cap, Math.max(end, this.#buffer.byteLength * 2, 64 * 1024));
    if (end <= this.#buffer.maxByteLength) {
      this.#buffer.resize(Math.min(size, this.#buffer.maxByteLength));
      return;
    }
    // Past `atMost`: what arrived so far moves once into a buffer that may grow to the cap.
    const next = new ArrayBuffer(size, { maxByteLength: this.#cap });
    new Uint8Array(next).set(new Uint8Array(this.#buffer, 0, this.#length));
    this.#buffer = next;
  }
}
