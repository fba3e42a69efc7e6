// Token counting with the o200k_base vocabulary: sizes inputs against context windows and the
// worst-case reservation, and gives the simulator real token counts and one-token deltas.
//
// The vocabulary is tiktoken's o200k_base in a compact binary form (src/catalog/vocabulary.ts) that
// the build writes and the executable embeds. Encoding is tiktoken's byte-pair merge over the
// pieces of the o200k split pattern (src/catalog/bpe.ts: linear in the input, a piece merged in
// bounded chunks, a chunk repeated in one text merged once); special-token texts are counted as
// ordinary text (a prompt is user data, never control tokens).

import { readFileSync } from "node:fs";
import { ChunkMemo, MAX_PIECE_BYTES, type MergeTable, mergeChunks, mergePiece, mergeTable } from "./bpe.ts";
// Written by the build (scripts/vocabulary.ts) from tiktoken's o200k_base.json.
import vocabFile from "./o200k_base.vocab" with { type: "file" };
import { readVocabulary } from "./vocabulary.ts";

/** The o200k_base split pattern (tiktoken's, with its case-insensitive contractions spelled out). */
const CONTRACTION = "(?:'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE]))?";
const SPLIT = new RegExp(
  String.raw`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+${CONTRACTION}` +
    String.raw`|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*${CONTRACTION}` +
    String.raw`|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
  "gu",
);

function vocabPath(): string {
  const path: unknown = vocabFile;
  if (typeof path !== "string")
    throw new Error("tokenizer: the o200k_base vocabulary was not embedded as a file");
  return path;
}

// Read at the first count, not at start: an idle `serve` never holds it (~4.3 MB of typed arrays
// and as many resident pages of the executable), and reading it is one copy, ~3 ms in a fresh
// process (parsing tiktoken's JSON there took ~50 ms, which the first request would wait for).
let loaded: MergeTable | undefined;
function table(): MergeTable {
  loaded ??= mergeTable(readVocabulary(readFileSync(vocabPath())));
  return loaded;
}

const encoder = new TextEncoder();
// Pieces are encoded into this buffer: a short one whole, a longer one a buffer at a time, its
// chunks merged as they fill it (a hostile run of 200,000 letters once took a 600 KB buffer of
// its own, garbage the token thread's heap held until it collected).
const scratch = new Uint8Array(64 * 1024);

/** Splits `text` by the o200k pattern and merges each piece's UTF-8 bytes. */
function encodeText(text: string, emit: (rank: number) => void): void {
  const merge = table();
  let memo: ChunkMemo | undefined; // made at the text's first long piece, shared by the others
  for (const [piece] of text.matchAll(SPLIT)) {
    // A UTF-16 unit is at most 3 bytes of UTF-8.
    if (piece.length * 3 <= MAX_PIECE_BYTES) {
      const { written } = encoder.encodeInto(piece, scratch);
      mergePiece(merge, scratch, 0, written, emit);
      continue;
    }
    memo ??= new ChunkMemo();
    let rest = piece;
    let held = 0; // bytes of the piece encoded but not merged yet, at the buffer's start
    for (;;) {
      const { read, written } = encoder.encodeInto(rest, scratch.subarray(held));
      rest = rest.slice(read);
      const end = held + written;
      const last = rest.length === 0;
      const from = mergeChunks(merge, scratch, 0, end, last, emit, memo);
      if (last) break;
      scratch.copyWithin(0, from, end);
      held = end - from;
    }
  }
}

// The request path asks for the same prompt's count more than once (the gateway, then the
// in-process simulator): the last answer is kept so a prompt is tokenized once. Only for texts up
// to 64 KiB: the cache must not hold a long prompt in memory after its request.
const CACHED_CHARS = 64 * 1024;
let lastText = "";
let lastCount = 0;

/** Thrown by the count's `emit` once it has passed its limit: the merge stops there. */
const PAST_LIMIT = Symbol("past the limit");

/** The number of tokens in `text`. */
export function countTokens(text: string): number {
  return countTokensUpTo(text, Number.POSITIVE_INFINITY);
}

/**
 * The number of tokens in `text`, or, once the count passes `atMost`, some number above it:
 * counting stops there (a prompt past a model's context costs the work of the context, not of
 * the whole body: 32 MiB of letters that never repeat took ~16 s to count).
 */
export function countTokensUpTo(text: string, atMost: number): number {
  if (text.length === 0) return 0;
  if (text === lastText) return lastCount;
  // No token is longer than the vocabulary's longest, so this many bytes are at least that many tokens.
  if (atMost < Number.POSITIVE_INFINITY) {
    const fewest = Math.ceil(Buffer.byteLength(text) / table().longest);
    if (fewest > atMost) return fewest;
  }
  let n = 0;
  try {
    encodeText(text, () => {
      if (++n > atMost) throw PAST_LIMIT;
    });
  } catch (thrown) {
    if (thrown !== PAST_LIMIT) throw thrown;
    return n;
  }
  if (text.length <= CACHED_CHARS) {
    lastText = text;
    lastCount = n;
  }
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
  const { bytes, offsets } = table().vocab;
  const pieces = encodeTokens(text).map((rank) =>
    decoder.decode(bytes.subarray(offsets[rank] ?? 0, offsets[rank + 1] ?? 0), { stream: true }),
  );
  const rest = decoder.decode();
  if (rest.length > 0) pieces.push(rest);
  return pieces;
}
