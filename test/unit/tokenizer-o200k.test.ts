// The compact o200k tokenizer (src/catalog/tokenizer.ts) against gpt-tokenizer's o200k_base on a
// corpus: the project's own sources and docs, many scripts, emoji, digits, whitespace runs, and
// seeded random Unicode. Counts, token ids and token pieces must be identical.
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { decode, encode } from "gpt-tokenizer/encoding/o200k_base";
import { countTokens, encodeTokens, tokenPieces } from "../../src/catalog/tokenizer.ts";

const ORDINARY = { disallowedSpecial: new Set<string>() };

const SAMPLES = [
  "Hello, world! How are you doing today?",
  "héllo 👋 世界 — naïve café, Straße, ÆØÅ æøå",
  "日本語のテキストと中文文本以及한국어 텍스트",
  "Привет, мир! Ελληνικά κείμενα. עברית. العربية. हिन्दी पाठ. ไทย",
  "I'm you're we've they'll she'd IT'S DON'T We'Re",
  "1234567890 3.14159 1,000,000 0x1F600 2026-11-21T17:54:05Z",
  "   leading spaces\n\n\ttabs\r\n  trailing   \n\n\n",
  "👨‍👩‍👧‍👦🏳️‍🌈🧑🏽‍💻 ⚡️🔥 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝟙𝟚𝟛",
  "<|endoftext|> and <|endofprompt|> are text here",
  "function f(x: number): number { return x ** 2; } // comment /* */ => !== ===",
  "a".repeat(500),
  " ".repeat(300),
  "😀".repeat(40),
  "",
];

function sourceFiles(dir: string, out: string[]): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) sourceFiles(path, out);
    else if (/\.(ts|tsx|md)$/.test(name)) out.push(readFileSync(path, "utf8"));
  }
  return out;
}

/** Seeded random strings over mixed Unicode ranges (including astral and combining marks). */
function randomTexts(count: number): string[] {
  let seed = 42;
  const next = () => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed / 2 ** 32;
  };
  const ranges = [
    [0x20, 0x7e],
    [0xa0, 0x2ff],
    [0x300, 0x36f],
    [0x400, 0x4ff],
    [0x4e00, 0x9fff],
    [0xac00, 0xd7a3],
    [0x1f300, 0x1faff],
    [0x9, 0xd],
  ] as const;
  const texts: string[] = [];
  for (let t = 0; t < count; t++) {
    let s = "";
    const len = 1 + Math.floor(next() * 60);
    for (let i = 0; i < len; i++) {
      const [lo, hi] = ranges[Math.floor(next() * ranges.length)] ?? [0x61, 0x7a];
      s += String.fromCodePoint(lo + Math.floor(next() * (hi - lo + 1)));
    }
    texts.push(s);
  }
  return texts;
}

describe("o200k tokenizer", () => {
  test("token ids and counts equal gpt-tokenizer's on samples, sources and random Unicode", () => {
    const corpus = [
      ...SAMPLES,
      ...sourceFiles("src", []),
      ...sourceFiles("test/unit", []),
      ...randomTexts(2000),
    ];
    let tokens = 0;
    for (const text of corpus) {
      const expected = encode(text, ORDINARY);
      expect(encodeTokens(text)).toEqual(expected);
      expect(countTokens(text)).toBe(expected.length);
      tokens += expected.length;
    }
    expect(tokens).toBeGreaterThan(100_000);
  });

  test("token pieces equal gpt-tokenizer's one-token decodes", () => {
    for (const text of [...SAMPLES, ...randomTexts(300)]) {
      expect(tokenPieces(text)).toEqual(encode(text, ORDINARY).map((t) => decode([t])));
    }
  });

  test("known counts", () => {
    expect(countTokens("Hello, world!")).toBe(4);
    expect(countTokens("")).toBe(0);
    expect(tokenPieces("héllo 👋 世界")).toEqual(["hé", "llo", " ", "👋", " 世界"]);
  });
});
