// Token counting with the o200k_base vocabulary: sizes inputs against context windows and the
// worst-case reservation, and gives the simulator real token counts and one-token deltas.
//
// The vocabulary is tiktoken's o200k_base in a compact binary form (src/catalog/vocabulary.ts) that
// the build writes and the executable embeds. Encoding is tiktoken's byte-pair merge over the
// pieces of the o200k split pattern; special-token texts are counted as ordinary text (a prompt is
// user data, never control tokens).

import { readFileSync } from "node:fs";
// Written by the build (scripts/vocabulary.ts) from tiktoken's o200k_base.json.
import vocabFile from "./o200k_base.vocab" with { type: "file" };
import { NONE, rankOf, readVocabulary, type Vocabulary } from "./vocabulary.ts";

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
let loaded: Vocabulary | undefined;
function vocabulary(): Vocabulary {
  loaded ??= readVocabulary(readFileSync(vocabPath()));
  return loaded;
}

const encoder = new TextEncoder();
let scratch = new Uint8Array(256);
const bounds: number[] = [];
const pairRanks: number[] = [];

/** tiktoken's byte-pair merge of `buf[0 .. len)`: calls `emit(rank)` for each token in order. */
function mergePiece(vocab: Vocabulary, buf: Uint8Array, len: number, emit: (rank: number) => void): void {
  const whole = rankOf(vocab, buf, 0, len);
  if (whole !== NONE) {
    emit(whole);
    return;
  }
  bounds.length = 0;
  pairRanks.length = 0;
  for (let i = 0; i <= len; i++) bounds.push(i);
  for (let i = 0; i + 2 <= len; i++) pairRanks.push(rankOf(vocab, buf, i, i + 2));
  pairRanks.push(NONE);
  const pairAt = (i: number): number =>
    i + 3 < bounds.length ? rankOf(vocab, buf, bounds[i] ?? 0, bounds[i + 3] ?? 0) : NONE;
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
  for (let i = 0; i + 1 < bounds.length; i++) emit(rankOf(vocab, buf, bounds[i] ?? 0, bounds[i + 1] ?? 0));
}

/** Splits `text` by the o200k pattern and merges each piece's UTF-8 bytes. */
function encodeText(text: string, emit: (rank: number) => void): void {
  const vocab = vocabulary();
  for (const [piece] of text.matchAll(SPLIT)) {
    if (scratch.length < piece.length * 3) scratch = new Uint8Array(piece.length * 3);
    const { written } = encoder.encodeInto(piece, scratch);
    mergePiece(vocab, scratch, written, emit);
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
  const { bytes, offsets } = vocabulary();
  const pieces = encodeTokens(text).map((rank) =>
    decoder.decode(bytes.subarray(offsets[rank] ?? 0, offsets[rank + 1] ?? 0), { stream: true }),
  );
  const rest = decoder.decode();
  if (rest.length > 0) pieces.push(rest);
  return pieces;
}
