// What a flag's or argument's text means, checked with valibot and the config's blocks: a USD
// amount, a whole number, a printable name. A bad value is a UsageError naming the flag.
import * as v from "valibot";
import { parseUsd } from "../base/money.ts";
import type { Nanos } from "../base/types.ts";
import { checkName } from "../config/blocks.ts";
import { UsageError } from "./usage-error.ts";

export function usd(text: string, flag: string): Nanos {
  const parsed = parseUsd(text);
  if (!parsed.ok) throw new UsageError(`${flag}: ${parsed.message}`);
  return parsed.value;
}

/** An operator-given name (account, group, key, admin token), refused with `field` named when it holds a control character. */
export function printableName(text: string, field: string): string {
  const problem = checkName(text);
  if (problem) throw new UsageError(`${field}: ${problem}`);
  return text;
}

export function positiveInt(text: string | undefined, flag: string): number | null {
  if (text === undefined) return null;
  const result = v.safeParse(v.pipe(v.string(), v.regex(/^\d+$/), v.transform(Number), v.minValue(1)), text);
  if (!result.success) throw new UsageError(`${flag}: expected a whole number of at least 1, got "${text}"`);
  return result.output;
}
