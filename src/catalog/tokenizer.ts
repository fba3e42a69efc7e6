// Token counting with the o200k_base vocabulary: sizes inputs against context windows and the
// worst-case reservation, and gives the simulator real token counts and one-token deltas.
//
// The vocabulary (tiktoken's o200k_base data file, embedded in the executable) is held compactly:
// all tokens' bytes in one Uint8Array, an offset per rank, and an open-addressing hash table of
// ranks, about 6 MB in all instead of ~57 MB for a JS array and Map of 200k strings. Encoding is
// tiktoken's byte-pair merge over the pieces of the o200k split pattern; special-token texts are
// counted as ordinary text (a prompt is user data, never control tokens).

import { readFileSync } from "node:fs";
import vocabFile from "tiktoken/encoders/o200k_base.json" with { type: "file" };

/** The o200k_base split pattern (tiktoken's, with its case-insensitive contractions spelled out). */
const CONTRACTION = "(?:'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE]))?";
const SPLIT = new RegExp(
  String.raw`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+${CONTRACTION}` +
    String.raw`|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*${CONTRACTION}` +
    String.raw`|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
  "gu",
);

interface Vocabulary {
  /** Every token's bytes, concatenated in rank order. */
  bytes: Uint8Array;
  /** Token `rank` is `bytes[offsets[rank] .. offsets[rank + 1])`. */
  offsets: Uint32Array;
  /** Open addressing on the FNV-1a hash of a token's bytes: rank + 1, 0 for an empty slot. */
  slots: Int32Array;
}

const NONE = 0x7fffffff;

function hashBytes(buf: Uint8Array, from: number, to: number): number {
  let h = 0x811c9dc5;
  for (let i = from; i < to; i++) h = Math.imul(h ^ (buf[i] ?? 0), 0x01000193);
  return h >>> 0;
}

/** The rank of `buf[from .. to)` as one token, or NONE. */
function rankOf(vocab: Vocabulary, buf: Uint8Array, from: number, to: number): number {
  const { bytes, offsets, slots } = vocab;
  const mask = slots.length - 1;
  const len = to - from;
  for (let slot = hashBytes(buf, from, to) & mask; ; slot = (slot + 1) & mask) {
    const entry = slots[slot] ?? 0;
    if (entry === 0) return NONE;
    const rank = entry - 1;
    const start = offsets[rank] ?? 0;
    if ((offsets[rank + 1] ?? 0) - start !== len) continue;
    let i = 0;
    while (i < len && bytes[start + i] === buf[from + i]) i++;
    if (i === len) return rank;
  }
}

const BASE64 = new Int8Array(128).fill(-1);
for (const [i, c] of [..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"].entries()) {
  BASE64[c.charCodeAt(0)] = i;
}

/** Decodes base64 `src[from .. to)` into `out` at `at`; returns the new end of `out`. */
function unbase64(src: Uint8Array, from: number, to: number, out: Uint8Array, at: number): number {
  let acc = 0;
  let bits = 0;
  let end = at;
  for (let i = from; i < to; i++) {
    const v = BASE64[src[i] ?? 0] ?? -1;
    if (v < 0) break; // "=" padding ends the token
    acc = ((acc << 6) | v) & 0xffffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[end++] = (acc >> bits) & 0xff;
    }
  }
  return end;
}

type Visit = (rank: number, from: number, to: number) => void;

/**
 * Calls `visit` for each token of the `bpe_ranks` value of tiktoken's o200k_base.json, read as bytes
 * (no JS string per token): lines of `NAME OFFSET TOKEN TOKEN ...`, base64 tokens with consecutive
 * ranks from OFFSET, lines joined by an escaped newline.
 */
function scanRanks(src: Uint8Array, visit: Visit): void {
  const key = new TextEncoder().encode('"bpe_ranks":"');
  let i = Buffer.from(src.buffer, src.byteOffset, src.length).indexOf(key);
  if (i < 0) throw new Error("tokenizer: o200k_base.json has no bpe_ranks");
  i += key.length;
  const fieldEnd = (from: number): number => {
    let end = from;
    while (end < src.length && src[end] !== 0x20 && src[end] !== 0x22 && src[end] !== 0x5c) end++;
    return end;
  };
  while (i < src.length && src[i] !== 0x22) {
    i = fieldEnd(i) + 1; // NAME
    let end = fieldEnd(i);
    let rank = 0;
    for (let d = i; d < end; d++) rank = rank * 10 + ((src[d] ?? 0x30) - 0x30);
    i = end + 1;
    for (;;) {
      end = fieldEnd(i);
      visit(rank++, i, end);
      i = end;
      if (src[i] !== 0x20) break;
      i++;
    }
    if (src[i] === 0x5c) i += 2; // the escaped newline between lines
  }
}

/** Two passes over the data: sizes, then each token's bytes into place; then the hash table. */
function loadVocabulary(src: Uint8Array): Vocabulary {
  let count = 0;
  scanRanks(src, (rank) => {
    count = Math.max(count, rank + 1);
  });
  const lengths = new Uint32Array(count);
  scanRanks(src, (rank, from, to) => {
    let chars = to - from;
    while (chars > 0 && src[from + chars - 1] === 0x3d) chars--; // "=" padding
    lengths[rank] = Math.floor((chars * 6) / 8);
  });
  const offsets = new Uint32Array(count + 1);
  for (let rank = 0; rank < count; rank++) offsets[rank + 1] = (offsets[rank] ?? 0) + (lengths[rank] ?? 0);
  const bytes = new Uint8Array(offsets[count] ?? 0);
  scanRanks(src, (rank, from, to) => {
    unbase64(src, from, to, bytes, offsets[rank] ?? 0);
  });
  let size = 1;
  while (size < count * 2) size *= 2;
  const vocab: Vocabulary = { bytes, offsets, slots: new Int32Array(size) };
  for (let rank = 0; rank < count; rank++) if ((lengths[rank] ?? 0) > 0) insert(vocab, rank);
  return vocab;
}

function insert(vocab: Vocabulary, rank: number): void {
  const { bytes, offsets, slots } = vocab;
  const mask = slots.length - 1;
  let slot = hashBytes(bytes, offsets[rank] ?? 0, offsets[rank + 1] ?? 0) & mask;
  while ((slots[slot] ?? 0) !== 0) slot = (slot + 1) & mask;
  slots[slot] = rank + 1;
}

function vocabPath(): string {
  const path: unknown = vocabFile;
  if (typeof path !== "string")
    throw new Error("tokenizer: the o200k_base vocabulary was not embedded as a file");
  return path;
}

const VOCAB = loadVocabulary(readFileSync(vocabPath()));
const encoder = new TextEncoder();
let scratch = new Uint8Array(256);
const bounds: number[] = [];
const pairRanks: number[] = [];

/** tiktoken's byte-pair merge of `buf[0 .. len)`: calls `emit(rank)` for each token in order. */
function mergePiece(buf: Uint8Array, len: number, emit: (rank: number) => void): void {
  const whole = rankOf(VOCAB, buf, 0, len);
  if (whole !== NONE) {
    emit(whole);
    return;
  }
  bounds.length = 0;
  pairRanks.length = 0;
  for (let i = 0; i <= len; i++) bounds.push(i);
  for (let i = 0; i + 2 <= len; i++) pairRanks.push(rankOf(VOCAB, buf, i, i + 2));
  pairRanks.push(NONE);
  const pairAt = (i: number): number =>
    i + 3 < bounds.length ? rankOf(VOCAB, buf, bounds[i] ?? 0, bounds[i + 3] ?? 0) : NONE;
  for (;;) {
    let best = NONE;
    let at = -1;
    for (let i = 0; i + 1 < pairRanks.length; i++) {
      const r = pairRanks[i] ?? NONE;
      if (r < best) [best, at] = [r, i];
    }
    if (at < 0) break;
    pairRanks[at] = pairAt(at);
    if (at > 0) pairRanks[at - 1] = pairAt(at - 1);
    bounds.splice(at + 1, 1);
    pairRanks.splice(at + 1, 1);
  }
  for (let i = 0; i + 1 < bounds.length; i++) emit(rankOf(VOCAB, buf, bounds[i] ?? 0, bounds[i + 1] ?? 0));
}

/** Splits `text` by the o200k pattern and merges each piece's UTF-8 bytes. */
function encodeText(text: string, emit: (rank: number) => void): void {
  for (const [piece] of text.matchAll(SPLIT)) {
    if (scratch.length < piece.length * 3) scratch = new Uint8Array(piece.length * 3);
    const { written } = encoder.encodeInto(piece, scratch);
    mergePiece(scratch, written, emit);
  }
}

// The request path asks for the same prompt's count more than once (context check, reservation):
// the last answer is kept so a prompt is tokenized once.
let lastText = "";
let lastCount = 0;

/** The number of tokens in `text`. */
export function countTokens(text: string): number {
  if (text.length === 0) return 0;
  if (text === lastText) return lastCount;
  let n = 0;
  encodeText(text, () => {
    n++;
  });
  lastText = text;
  lastCount = n;
  return n;
}

/** The token ranks of `text` (o200k_base). */
export function encodeTokens(text: string): number[] {
  const out: number[] = [];
  encodeText(text, (rank) => out.push(rank));
  return out;
}

/**
 * Splits text into its tokens' texts, so a stream can send exactly one token per delta. A token that
 * ends inside a multi-byte character carries those bytes over to the next piece, so the pieces
 * always join to `text` (a 4-byte emoji split over two tokens gives " " then "👋").
 */
export function tokenPieces(text: string): string[] {
  const decoder = new TextDecoder();
  const { bytes, offsets } = VOCAB;
  const pieces = encodeTokens(text).map((rank) =>
    decoder.decode(bytes.subarray(offsets[rank] ?? 0, offsets[rank + 1] ?? 0), { stream: true }),
  );
  const rest = decoder.decode();
  if (rest.length > 0) pieces.push(rest);
  return pieces;
}
