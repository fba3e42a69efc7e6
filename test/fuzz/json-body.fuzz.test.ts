// Property tests of the JSON body reader (src/request/body.ts; issue 17, fuzzing): any JSON value
// parses as JSON.parse does; any byte string is either parsed or refused with a 400 naming the
// problem (never another error); the depth check agrees with a reference count for every nesting
// and string content; invalid UTF-8 is always refused. Fixed seed (FUZZ_SEED overrides it).
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { GatewayError } from "../../src/wire/errors.ts";
import { MAX_JSON_DEPTH, nestsDeeperThan, parseJson } from "../../src/wire/json.ts";

const SEED = Number(process.env.FUZZ_SEED ?? 170_005);
const RUNS = 300;
const encoder = new TextEncoder();

/** parseJson's outcome: the value, or the refusal's status and message. */
function outcome(bytes: Uint8Array): { value: unknown } | { status: number; message: string } {
  try {
    return { value: parseJson(bytes) };
  } catch (thrown) {
    if (!(thrown instanceof GatewayError)) throw thrown;
    return { status: thrown.status, message: thrown.message };
  }
}

/** Nesting depth of JSON text by a plain character walk (the reference for nestsDeeperThan). */
function referenceDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "[" || c === "{") max = Math.max(max, ++depth);
    else if (c === "]" || c === "}") depth--;
  }
  return max;
}

/** Strings full of what a depth scanner can trip on: brackets, quotes, backslashes, non-ASCII. */
const tricky = fc.string({
  unit: fc.constantFrom("[", "{", "]", "}", '"', "\\", "a", "é", "🦊", "\\\\", '\\"'),
});

/** A value nested `depth` levels deep, alternating arrays and objects, with tricky strings inside. */
const nested = fc
  .record({ depth: fc.integer({ min: 0, max: 300 }), leaf: tricky, key: tricky })
  .map(({ depth, leaf, key }) => {
    let value: unknown = leaf;
    for (let i = 0; i < depth; i++) value = i % 2 === 0 ? [value, key] : { [key]: value };
    return { depth, text: JSON.stringify(value) };
  });

describe("JSON bodies", () => {
  test("any JSON value parses exactly as JSON.parse", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), (value) => {
        const text = JSON.stringify(value);
        expect(outcome(encoder.encode(text))).toEqual({ value: JSON.parse(text) });
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  test("any bytes are parsed or refused with 400, never another error", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        const result = outcome(bytes);
        if ("status" in result) expect(result.status).toBe(400);
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  test("the depth check agrees with a reference count, whatever the strings hold", () => {
    fc.assert(
      fc.property(nested, fc.integer({ min: 1, max: 200 }), ({ depth, text }, limit) => {
        const bytes = encoder.encode(text);
        expect(referenceDepth(text)).toBe(depth);
        expect(nestsDeeperThan(bytes, limit)).toBe(depth > limit);
        const result = outcome(bytes);
        if (depth > MAX_JSON_DEPTH) expect(result).toMatchObject({ status: 400 });
        else expect(result).toEqual({ value: JSON.parse(text) });
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  test("odd numbers parse as JavaScript reads them (huge, tiny, negative zero, exponents)", () => {
    const odd = fc.constantFrom(
      "1e400",
      "-1e400",
      "1e-400",
      "-0",
      "0.0000000000000000001",
      "123456789012345678901234567890",
      "1E+2",
      "-0.0e-0",
    );
    fc.assert(
      fc.property(odd, (number) => {
        const text = `{"max_tokens":${number},"n":[${number}]}`;
        expect(outcome(encoder.encode(text))).toEqual({ value: JSON.parse(text) });
      }),
      { seed: SEED, numRuns: 50 },
    );
  });

  test("a body with any invalid UTF-8 sequence inside a string is refused as not UTF-8", () => {
    // Lone continuation bytes, overlong forms, surrogates encoded in UTF-8, truncated sequences.
    const invalid = fc.constantFrom(
      [0x80],
      [0xbf],
      [0xc0, 0xaf],
      [0xc3],
      [0xe0, 0x80, 0xaf],
      [0xed, 0xa0, 0x80],
      [0xf4, 0x90, 0x80, 0x80],
      [0xff],
      [0xf0, 0x9f, 0xa6],
    );
    fc.assert(
      fc.property(
        fc.string({ maxLength: 20 }),
        invalid,
        fc.string({ maxLength: 20 }),
        (before, bad, after) => {
          const prefix = encoder.encode(`{"content":${JSON.stringify(before).slice(0, -1)}`);
          const suffix = encoder.encode(`${JSON.stringify(after).slice(1)}}`);
          const bytes = new Uint8Array([...prefix, ...bad, ...suffix]);
          const result = outcome(bytes);
          expect(result).toMatchObject({ status: 400 });
          expect("message" in result && result.message).toContain("UTF-8");
        },
      ),
      { seed: SEED, numRuns: RUNS },
    );
  });
});
