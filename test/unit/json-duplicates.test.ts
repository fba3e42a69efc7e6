// parseJsonBody's repeated-key report (src/wire/json.ts): the keys counted in the text by the depth
// scan against the keys of the parsed value. A property over random JSON: serialized values never
// report one; the same text with one key written twice always does.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { parseJsonBody } from "../../src/wire/json.ts";

const bytes = (text: string) => new TextEncoder().encode(text);
const duplicated = (text: string) => parseJsonBody(bytes(text)).duplicateKeys;

describe("repeated keys", () => {
  test("examples: top level, nested, with spaces before the colon; strings holding colons are not keys", () => {
    expect(duplicated('{"a":1,"a":2}')).toBe(true);
    expect(duplicated('{"x":[{"b":1,"c":{"d":1, "d" :2}}]}')).toBe(true);
    expect(duplicated('{"a":"b:c","s":"\\"a\\":1","t":["k",":"]}')).toBe(false);
    expect(duplicated('{"a":{"a":{"a":1}}}')).toBe(false);
    expect(duplicated("[1,2]")).toBe(false);
  });

  test("property: JSON.stringify output never repeats a key; writing one key twice is always found", () => {
    const object = fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 4 }), { minKeys: 1 });
    fc.assert(
      fc.property(object, fc.jsonValue(), (value, extra) => {
        const text = JSON.stringify(value);
        expect(duplicated(text)).toBe(false);
        const [key] = Object.keys(value);
        const twice = `{${JSON.stringify(key)}:${JSON.stringify(extra)},${text.slice(1)}`;
        expect(duplicated(twice)).toBe(true);
      }),
      { seed: 2505, numRuns: 300 },
    );
  });
});
