// The tokenizer's built vocabulary (scripts/vocabulary.ts → src/catalog/o200k_base.vocab): the file
// the build wrote is exactly what the pinned tiktoken package gives, its hash table finds every token
// at its own rank, and a file in another form is refused instead of misread.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { buildVocabulary, VOCABULARY_FILE } from "../../scripts/vocabulary.ts";
import { NONE, rankOf, readVocabulary } from "../../src/catalog/vocabulary.ts";

describe("o200k vocabulary file", () => {
  const built = readFileSync(VOCABULARY_FILE);

  test("equals a fresh build from tiktoken's o200k_base.json", () => {
    expect(Buffer.compare(buildVocabulary(), built)).toBe(0);
  });

  test("every token's bytes look up to its own rank", () => {
    const vocab = readVocabulary(built);
    const count = vocab.offsets.length - 1;
    expect(count).toBe(199_998); // o200k_base's ordinary tokens
    let found = 0;
    for (let rank = 0; rank < count; rank++) {
      const from = vocab.offsets[rank] ?? 0;
      const to = vocab.offsets[rank + 1] ?? 0;
      if (to > from && rankOf(vocab, vocab.bytes, from, to) === rank) found++;
    }
    expect(found).toBe(count);
    expect(rankOf(vocab, new Uint8Array([0xff, 0xfe, 0xfd, 0xfc, 0xfb]), 0, 5)).toBe(NONE);
  });

  test("a copy that does not start 4-byte aligned reads the same", () => {
    const shifted = new Uint8Array(built.length + 1);
    shifted.set(built, 1);
    const vocab = readVocabulary(shifted.subarray(1));
    expect(Buffer.compare(vocab.bytes, readVocabulary(built).bytes)).toBe(0);
    expect([...vocab.offsets.subarray(0, 1000)]).toEqual([
      ...readVocabulary(built).offsets.subarray(0, 1000),
    ]);
  });

  test("a file in another form is refused", () => {
    const other = new Uint8Array(built.length);
    other.set(built);
    other[0] = 0x78;
    expect(() => readVocabulary(other)).toThrow("not in the o200kv1 form");
    expect(() => readVocabulary(new Uint8Array(built.subarray(0, built.length - 1)))).toThrow(
      "does not match its header",
    );
  });
});
