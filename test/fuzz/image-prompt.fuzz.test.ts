// Property test of image prompt length (issue 17, defect 6): the prompt limit counts Unicode code
// points (test/integration/hardening.test.ts sends 20,000 emoji), and codePoints agrees with the
// string iterator for any text, astral characters and lone surrogates included. Fixed seed
// (FUZZ_SEED overrides it).
import { expect, test } from "bun:test";
import fc from "fast-check";
import { codePoints } from "../../src/wire/images.ts";

const SEED = Number(process.env.FUZZ_SEED ?? 170_006);

test("codePoints counts what the string iterator yields, lone surrogates included", () => {
  const unit = fc.oneof(
    fc.string({ unit: "binary", maxLength: 50 }),
    fc.string({ unit: fc.constantFrom("a", "é", "🦊", "\ud800", "\udc00", "👩‍👩‍👧"), maxLength: 50 }),
  );
  fc.assert(
    fc.property(unit, (text) => {
      expect(codePoints(text)).toBe([...text].length);
    }),
    { seed: SEED, numRuns: 500 },
  );
});
