import { describe, expect, test } from "bun:test";
import { formatUsd, nanos, parseUsd } from "../../src/base/money.ts";

describe("money", () => {
  test("parses decimal USD exactly into nano-USD", () => {
    expect(parseUsd("10")).toEqual({ ok: true, value: nanos(10_000_000_000) });
    expect(parseUsd("0.25")).toEqual({ ok: true, value: nanos(250_000_000) });
    expect(parseUsd("1.000000001")).toEqual({ ok: true, value: nanos(1_000_000_001) });
    // 0.1 + 0.2 style float error cannot happen: digits are parsed, not multiplied.
    expect(parseUsd("0.3")).toEqual({ ok: true, value: nanos(300_000_000) });
  });

  test("refuses negative, over-precise and non-numeric amounts with a message", () => {
    for (const bad of ["-1", "1.0000000001", "ten", "", "1e3"]) {
      const result = parseUsd(bad);
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.message).toContain("USD amount");
    }
  });

  test("formats nano-USD with at least two decimals", () => {
    expect(formatUsd(nanos(10_000_000_000))).toBe("10.00");
    expect(formatUsd(nanos(125_000))).toBe("0.000125");
    expect(formatUsd(nanos(-1_500_000_000))).toBe("-1.50");
  });

  test("nanos() rejects values that are not safe integers", () => {
    expect(() => nanos(0.5)).toThrow();
    expect(() => nanos(2 ** 53)).toThrow();
  });
});
