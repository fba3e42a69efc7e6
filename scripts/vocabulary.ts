// Build step: writes src/catalog/o200k_base.vocab, the tokenizer's vocabulary in its binary form
// (src/catalog/vocabulary.ts), from the pinned tiktoken package's o200k_base.json. The executable
// embeds that file; every build runs this first (`npm run build`, the test preload, the benches
// that compile), and the same package version always gives the same bytes.
//
//   bun scripts/vocabulary.ts
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { hashSlots, type Vocabulary, vocabularyBytes } from "../src/catalog/vocabulary.ts";

/** Where the build writes the vocabulary; src/catalog/tokenizer.ts embeds it (not in git). */
export const VOCABULARY_FILE = join(import.meta.dir, "../src/catalog/o200k_base.vocab");

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
  if (i < 0) throw new Error("vocabulary: o200k_base.json has no bpe_ranks");
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

/** Two passes over tiktoken's data: sizes, then each token's bytes into place; then the hash table. */
export function parseTiktoken(src: Uint8Array): Vocabulary {
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
  return { bytes, offsets, slots: hashSlots(bytes, offsets) };
}

/** The binary vocabulary built from the installed tiktoken package. */
export function buildVocabulary(): Uint8Array {
  const json = Bun.resolveSync("tiktoken/encoders/o200k_base.json", import.meta.dir);
  return vocabularyBytes(parseTiktoken(readFileSync(json)));
}

/** Writes VOCABULARY_FILE (through a rename, so a build running beside this one never reads half). */
export function writeVocabulary(): void {
  const partial = `${VOCABULARY_FILE}.${process.pid}.tmp`;
  writeFileSync(partial, buildVocabulary());
  renameSync(partial, VOCABULARY_FILE);
}

if (import.meta.main) writeVocabulary();
