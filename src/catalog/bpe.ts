// The byte-pair merge of one pre-tokenizer piece, in time linear in the input: tiktoken's rule
// (merge the adjacent pair of lowest rank, the leftmost on a tie, until no pair is a token) with
// a heap for pieces longer than a few dozen bytes, and pieces bounded in length.
//
// tiktoken and gpt-tokenizer rescan every pair after each merge: O(n²) in a piece's length, and a
// piece is a run of letters, so 80,000 `a`s took 12 s on the event loop. Here a piece is merged
// in chunks of at most MAX_PIECE_BYTES (as Llama 3's tiktoken wrapper cuts runs of 25,000
// characters): ordinary text never has a piece that long (a word, a run of spaces), so its counts
// are exactly tiktoken's; a longer run counts within a token or so per chunk of its exact count.
// Within a chunk the heap makes each merge O(log n), and a candidate pair longer than the longest
// token is never looked up, so each lookup is bounded too. The chunks of one text are remembered
// (ChunkMemo, as Hugging Face's tokenizers cache the words they merged): a hostile run repeats its
// chunk (100,000 `a`s are one 4 KiB chunk 24 times over), which is then merged once.
import { NONE, rankOf, type Vocabulary } from "./vocabulary.ts";

/** The longest run of bytes merged as one piece; a longer piece is merged in chunks of this size. */
export const MAX_PIECE_BYTES = 4096;

/** Pieces up to this length use the rescanning merge: fewer steps than a heap's for short words. */
const SCAN_PIECE_BYTES = 48;

/** The vocabulary with the length of its longest token (no pair longer than that is a token). */
export interface MergeTable {
  vocab: Vocabulary;
  longest: number;
}

export function mergeTable(vocab: Vocabulary): MergeTable {
  let longest = 0;
  for (let rank = 0; rank + 1 < vocab.offsets.length; rank++)
    longest = Math.max(longest, (vocab.offsets[rank + 1] ?? 0) - (vocab.offsets[rank] ?? 0));
  return { vocab, longest };
}

// Work done since the process started, in rank lookups and heap steps: a deterministic measure of
// the tokenizer's cost that tests compare across input sizes (wall-clock time is not).
let steps = 0;

/** The merge steps taken so far in this thread (rank lookups and heap pops). */
export function mergeSteps(): number {
  return steps;
}

function rankIn(table: MergeTable, buf: Uint8Array, from: number, to: number): number {
  if (to - from > table.longest) return NONE;
  steps++;
  return rankOf(table.vocab, buf, from, to);
}

/**
 * Merges `buf[from .. to)` and calls `emit(rank)` for each token in order. A piece longer than
 * MAX_PIECE_BYTES is merged chunk by chunk (mergeChunks).
 */
export function mergePiece(
  table: MergeTable,
  buf: Uint8Array,
  from: number,
  to: number,
  emit: (rank: number) => void,
  memo?: ChunkMemo,
): void {
  if (to - from <= MAX_PIECE_BYTES) mergeChunk(table, buf, from, to, emit);
  else mergeChunks(table, buf, from, to, true, emit, memo ?? new ChunkMemo());
}

/**
 * Merges a long piece's bytes `buf[from .. to)` in chunks of at most MAX_PIECE_BYTES, each ending
 * on a UTF-8 character boundary, counted from the piece's start. With `last` false the bytes are
 * only the piece's start so far (it is encoded a buffer at a time): what follows the last whole
 * chunk is left for the next call, which gets it at its start, and where it begins is returned.
 */
export function mergeChunks(
  table: MergeTable,
  buf: Uint8Array,
  from: number,
  to: number,
  last: boolean,
  emit: (rank: number) => void,
  memo: ChunkMemo,
): number {
  while (to - from > MAX_PIECE_BYTES) {
    let end = from + MAX_PIECE_BYTES;
    // Back to the start of a character (continuation bytes are 10xxxxxx); a chunk is never empty.
    while (end > from + 1 && ((buf[end] ?? 0) & 0xc0) === 0x80) end--;
    memo.merge(table, buf, from, end, emit);
    from = end;
  }
  if (!last) return from;
  if (to > from) memo.merge(table, buf, from, to, emit);
  return to;
}

/** The most distinct chunks a memo keeps (~8 KiB each): a run with a period of up to 32 bytes repeats within them. */
const MEMO_CHUNKS = 32;

/**
 * The tokens of the long pieces' chunks merged so far in one text, by the chunk's bytes: a chunk
 * seen again is emitted from here, the same tokens its merge gave (so counts stay exact), at the
 * cost of reading its bytes once. Made per text and dropped with it.
 */
export class ChunkMemo {
  readonly #ranks = new Map<string, Int32Array>();
  #hits = 0;

  merge(table: MergeTable, buf: Uint8Array, from: number, to: number, emit: (rank: number) => void): void {
    // Full and never hit: the text does not repeat its chunks, and looking them up costs ~5 %.
    if (this.#hits === 0 && this.#ranks.size === MEMO_CHUNKS) {
      mergeChunk(table, buf, from, to, emit);
      return;
    }
    // latin1 maps each byte to one character: equal strings are equal bytes.
    const key = Buffer.from(buf.buffer, buf.byteOffset + from, to - from).toString("latin1");
    const known = this.#ranks.get(key);
    if (known !== undefined) {
      steps++;
      this.#hits++;
      for (const rank of known) emit(rank);
      return;
    }
    const ranks: number[] = [];
    mergeChunk(table, buf, from, to, (rank) => ranks.push(rank));
    if (this.#ranks.size < MEMO_CHUNKS) this.#ranks.set(key, Int32Array.from(ranks));
    for (const rank of ranks) emit(rank);
  }
}

function mergeChunk(
  table: MergeTable,
  buf: Uint8Array,
  from: number,
  to: number,
  emit: (rank: number) => void,
): void {
  const whole = rankIn(table, buf, from, to);
  if (whole !== NONE) emit(whole);
  else if (to - from <= SCAN_PIECE_BYTES) scanMerge(table, buf, from, to, emit);
  else heapMerge(table, buf, from, to, emit);
}

const bounds: number[] = [];
const pairRanks: number[] = [];

/** tiktoken's merge as written there: rescan for the lowest pair after every merge. */
function scanMerge(
  table: MergeTable,
  buf: Uint8Array,
  from: number,
  to: number,
  emit: (rank: number) => void,
): void {
  bounds.length = 0;
  pairRanks.length = 0;
  for (let i = from; i <= to; i++) bounds.push(i);
  for (let i = from; i + 2 <= to; i++) pairRanks.push(rankIn(table, buf, i, i + 2));
  pairRanks.push(NONE);
  const pairAt = (i: number): number =>
    i + 3 < bounds.length ? rankIn(table, buf, bounds[i] ?? 0, bounds[i + 3] ?? 0) : NONE;
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
  for (let i = 0; i + 1 < bounds.length; i++) emit(rankIn(table, buf, bounds[i] ?? 0, bounds[i + 1] ?? 0));
}

// The heap merge's state, sized once for the longest chunk. Parts are a linked list over chunk
// offsets: `next[i]` is where the part starting at i ends, `pair[i]` the rank of the part at i
// joined with the next one. The heap holds `rank * POSITIONS + i`: the lowest rank first and, on
// a tie, the leftmost part, which is tiktoken's order. An entry whose part was merged away or
// whose pair changed since is stale and skipped when it comes up. A key fits an int32: o200k's
// ranks are under 2^18 and a chunk's offsets under 2^13.
const POSITION_BITS = 13;
const POSITION_MASK = (1 << POSITION_BITS) - 1;
const POSITIONS = MAX_PIECE_BYTES + 1;
const next = new Int32Array(POSITIONS);
const prev = new Int32Array(POSITIONS);
const pair = new Int32Array(POSITIONS);
const alive = new Uint8Array(POSITIONS);
const heap = new Int32Array(3 * POSITIONS);
let heapSize = 0;

function heapPush(key: number): void {
  let i = heapSize++;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    const above = heap[parent] ?? 0;
    if (above <= key) break;
    heap[i] = above;
    i = parent;
  }
  heap[i] = key;
}

function heapPop(): number {
  steps++;
  const top = heap[0] ?? 0;
  const last = heap[--heapSize] ?? 0;
  let i = 0;
  for (;;) {
    let child = 2 * i + 1;
    if (child >= heapSize) break;
    if (child + 1 < heapSize && (heap[child + 1] ?? 0) < (heap[child] ?? 0)) child++;
    if ((heap[child] ?? 0) >= last) break;
    heap[i] = heap[child] ?? 0;
    i = child;
  }
  heap[i] = last;
  return top;
}

/** The rank of the part at `i` joined with the next one (chunk offsets), or NONE. */
function pairOf(table: MergeTable, buf: Uint8Array, from: number, len: number, i: number): number {
  const j = next[i] ?? 0;
  if (j >= len) return NONE;
  return rankIn(table, buf, from + i, from + (next[j] ?? 0));
}

/** Sets the pair at `i` and queues it when it is a token. */
function repair(table: MergeTable, buf: Uint8Array, from: number, len: number, i: number): void {
  const rank = pairOf(table, buf, from, len, i);
  pair[i] = rank;
  if (rank !== NONE) heapPush((rank << POSITION_BITS) | i);
}

/** The same merge as `scanMerge`, each step O(log n): the lowest pair taken from a heap. */
function heapMerge(
  table: MergeTable,
  buf: Uint8Array,
  from: number,
  to: number,
  emit: (rank: number) => void,
): void {
  const len = to - from;
  heapSize = 0;
  for (let i = 0; i < len; i++) {
    next[i] = i + 1;
    prev[i] = i - 1;
    alive[i] = 1;
  }
  for (let i = 0; i < len; i++) repair(table, buf, from, len, i);
  while (heapSize > 0) {
    const key = heapPop();
    const i = key & POSITION_MASK;
    if (alive[i] === 0 || pair[i] !== key >>> POSITION_BITS) continue;
    const j = next[i] ?? 0;
    alive[j] = 0;
    const after = next[j] ?? 0;
    next[i] = after;
    if (after < len) prev[after] = i;
    repair(table, buf, from, len, i);
    if (i > 0) repair(table, buf, from, len, prev[i] ?? 0);
  }
  for (let i = 0; i < len; i = next[i] ?? len) emit(rankIn(table, buf, from + i, from + (next[i] ?? len)));
}
