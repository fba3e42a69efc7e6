// Money: integer nano-USD, parsed from and printed as decimal USD strings without floats.
import type { Nanos } from "./types.ts";

export const NANOS_PER_USD = 1_000_000_000;
const USD_PATTERN = /^(\d{1,9})(?:\.(\d{1,9}))?$/;

/** Checks that an integer stays exact (below 2^53) and brands it as money. */
export function nanos(value: number): Nanos {
  if (!Number.isSafeInteger(value))
    throw new RangeError(`money value ${value} is not a safe integer of nano-USD`);
  return value as Nanos;
}

/**
 * Parses a non-negative decimal USD amount such as `10`, `0.25` or `1.000000001` into nano-USD.
 * Returns an error message naming the rule when the text is not such an amount.
 */
export function parseUsd(text: string): { ok: true; value: Nanos } | { ok: false; message: string } {
  const match = USD_PATTERN.exec(text.trim());
  if (!match) {
    return {
      ok: false,
      message: `"${text}" is not a USD amount: use digits with at most 9 decimals, e.g. 10 or 2.50`,
    };
  }
  const whole = Number(match[1]);
  const fraction = Number((match[2] ?? "").padEnd(9, "0"));
  const value = whole * NANOS_PER_USD + fraction;
  if (!Number.isSafeInteger(value)) {
    // Money is exact nano-USD below 2^53: nine whole digits can pass that.
    return {
      ok: false,
      message: `"${text}" is more than the largest amount this gateway holds exactly, ${formatUsd(Number.MAX_SAFE_INTEGER)} USD`,
    };
  }
  return { ok: true, value: nanos(value) };
}

/** Prints nano-USD as a decimal string with trailing zeros trimmed to at least 2 decimals: `10.00`, `0.000125`. */
export function formatUsd(value: Nanos | number): string {
  const negative = value < 0;
  const abs = Math.abs(value);
  const whole = Math.floor(abs / NANOS_PER_USD);
  let fraction = String(abs % NANOS_PER_USD).padStart(9, "0");
  fraction = fraction.replace(/0+$/, "").padEnd(2, "0");
  return `${negative ? "-" : ""}${whole}.${fraction}`;
}
