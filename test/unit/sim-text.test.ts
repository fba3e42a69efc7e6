import { describe, expect, test } from "bun:test";
import { countTokens } from "../../src/catalog/tokenizer.ts";
import { simulateText } from "../../src/sim/text.ts";

describe("simulated text", () => {
  test("is deterministic for a seed and request, and differs across seeds and prompts", () => {
    const a = simulateText({ seed: 1, key: "modelx-5.5|hello" });
    expect(simulateText({ seed: 1, key: "modelx-5.5|hello" })).toEqual(a);
    expect(simulateText({ seed: 2, key: "modelx-5.5|hello" }).text).not.toBe(a.text);
    expect(simulateText({ seed: 1, key: "modelx-5.5|bye" }).text).not.toBe(a.text);
  });

  test("reports the real token count, one piece per token", () => {
    for (let i = 0; i < 20; i++) {
      const out = simulateText({ seed: i, key: `prompt ${i}` });
      expect(out.outputTokens).toBe(countTokens(out.text));
      expect(out.pieces.length).toBe(out.outputTokens);
      expect(out.pieces.join("")).toBe(out.text);
      expect(out.outputTokens).toBeGreaterThanOrEqual(12);
      expect(out.truncated).toBe(false);
    }
  });

  test("honours a token limit exactly", () => {
    const out = simulateText({ seed: 3, key: "long", maxTokens: 5 });
    expect(out.truncated).toBe(true);
    expect(out.pieces).toHaveLength(5);
    expect(out.outputTokens).toBe(5);
  });
});
