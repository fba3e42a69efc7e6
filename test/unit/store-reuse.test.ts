// The `id~N` of a request that reused a stored id is found with a few point lookups, never a scan:
// for any number of earlier uses the search lands on the first free N, in about 2·log2 lookups.
import { expect, test } from "bun:test";
import fc from "fast-check";
import { firstFreeReuse } from "../../src/store/usage/rows.ts";

/** Drives the search against `uses` stored ids (`id~2` … `id~(uses+1)`); returns N and the lookups made. */
function search(uses: number): { n: number; lookups: number } {
  const g = firstFreeReuse();
  let lookups = 0;
  let step = g.next(true);
  while (!step.done) {
    lookups++;
    step = g.next(step.value <= uses + 1);
  }
  return { n: step.value, lookups };
}

test("the first free N after any number of uses, in O(log uses) lookups", () => {
  expect(search(0)).toEqual({ n: 2, lookups: 1 });
  expect(search(1).n).toBe(3);
  fc.assert(
    fc.property(fc.nat(1_000_000), (uses) => {
      const { n, lookups } = search(uses);
      expect(n).toBe(uses + 2);
      expect(lookups).toBeLessThanOrEqual(2 * Math.ceil(Math.log2(uses + 2)) + 2);
    }),
    { seed: 160016, numRuns: 500 },
  );
});
