// The compact o200k_base vocabulary and its binary form. The tokenizer looks tokens up in it; the
// build (scripts/vocabulary.ts) writes it once from tiktoken's data file, so loading it at run time
// is a copy of typed arrays instead of a parse of 200k base64 tokens (~50 ms, which the first
// request would wait for now that the vocabulary is read at its first use).
//
// Binary form, little-endian, every part 4-byte aligned: the 8-byte magic, then count, slot count,
// byte count and a reserved word (u32 each), then offsets (u32 × count + 1), slots (i32 × slot
// count), bytes (u8 × byte count).

/** The compact vocabulary: ~4 MB instead of ~57 MB for a JS array and Map of 200k strings. */
export interface Vocabulary {
  /** Every token's bytes, concatenated in rank order. */
  bytes: Uint8Array;
  /** Token `rank` is `bytes[offsets[rank] .. offsets[rank + 1])`. */
  offsets: Uint32Array;
  /** Open addressing on the FNV-1a hash of a token's bytes: rank + 1, 0 for an empty slot. */
  slots: Int32Array;
}

/** The rank `rankOf` answers for bytes that are not one token. */
export const NONE = 0x7fffffff;

const MAGIC = new TextEncoder().encode("o200kv1\n");
const HEADER_BYTES = MAGIC.length + 16;

function hashBytes(buf: Uint8Array, from: number, to: number): number {
  let h = 0x811c9dc5;
  for (let i = from; i < to; i++) h = Math.imul(h ^ (buf[i] ?? 0), 0x01000193);
  return h >>> 0;
}

/** The rank of `buf[from .. to)` as one token, or NONE. */
export function rankOf(vocab: Vocabulary, buf: Uint8Array, from: number, to: number): number {
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

/** The hash table over `bytes` and `offsets`: twice as many slots as tokens, a power of two. */
export function hashSlots(bytes: Uint8Array, offsets: Uint32Array): Int32Array {
  const count = offsets.length - 1;
  let size = 1;
  while (size < count * 2) size *= 2;
  const slots = new Int32Array(size);
  const mask = size - 1;
  for (let rank = 0; rank < count; rank++) {
    const from = offsets[rank] ?? 0;
    const to = offsets[rank + 1] ?? 0;
    if (to === from) continue;
    let slot = hashBytes(bytes, from, to) & mask;
    while ((slots[slot] ?? 0) !== 0) slot = (slot + 1) & mask;
    slots[slot] = rank + 1;
  }
  return slots;
}

/** The binary form of `vocab`. */
export function vocabularyBytes(vocab: Vocabulary): Uint8Array {
  const { bytes, offsets, slots } = vocab;
  const out = new Uint8Array(HEADER_BYTES + offsets.byteLength + slots.byteLength + bytes.byteLength);
  out.set(MAGIC);
  const header = new DataView(out.buffer, MAGIC.length, 16);
  header.setUint32(0, offsets.length - 1, true);
  header.setUint32(4, slots.length, true);
  header.setUint32(8, bytes.length, true);
  let at = HEADER_BYTES;
  for (const part of [offsets, slots, bytes]) {
    out.set(new Uint8Array(part.buffer, part.byteOffset, part.byteLength), at);
    at += part.byteLength;
  }
  return out;
}

/** Views over the binary form (no copy, unless `data` does not start 4-byte aligned as a fresh buffer does). */
export function readVocabulary(given: Uint8Array): Vocabulary {
  const data = given.byteOffset % 4 === 0 ? given : given.slice();
  if (data.length < HEADER_BYTES || MAGIC.some((b, i) => data[i] !== b))
    throw new Error("tokenizer: the embedded vocabulary is not in the o200kv1 form (rebuild it)");
  const header = new DataView(data.buffer, data.byteOffset + MAGIC.length, 16);
  const count = header.getUint32(0, true);
  const slotCount = header.getUint32(4, true);
  const byteCount = header.getUint32(8, true);
  if (HEADER_BYTES + (count + 1) * 4 + slotCount * 4 + byteCount !== data.length)
    throw new Error("tokenizer: the embedded vocabulary's size does not match its header (rebuild it)");
  let at = data.byteOffset + HEADER_BYTES;
  const offsets = new Uint32Array(data.buffer, at, count + 1);
  at += offsets.byteLength;
  const slots = new Int32Array(data.buffer, at, slotCount);
  at += slots.byteLength;
  return { bytes: new Uint8Array(data.buffer, at, byteCount), offsets, slots };
}
