// Shared valibot building blocks for operator input: CIDRs, model patterns, USD amounts, whole
// numbers and names (no control characters), each with a message that says what is expected. The config sections (src/config/*) and
// the admin API (src/admin/schemas.ts) use these, so one value is read the same way everywhere.
import * as v from "valibot";
import { checkCidr } from "../base/ip.ts";
import { parseUsd } from "../base/money.ts";
import type { Nanos } from "../base/types.ts";
import { checkModelPattern } from "../catalog/groups.ts";

/** An IPv4 or IPv6 CIDR (or a single address), checked with the problem named. */
export const Cidr = v.pipe(
  v.string(),
  v.check(
    (s) => checkCidr(s) === undefined,
    (issue) => checkCidr(String(issue.input)) ?? "invalid CIDR",
  ),
);

// A control character (C0, DEL, C1) or a bidirectional override/isolate: printed raw by
// `keys list`, the TUI or a log viewer, it would move the cursor, ring, retitle the terminal or
// reorder what the operator reads.
const CONTROL = /[\p{Cc}\u202A-\u202E\u2066-\u2069]/u;

/** Why an operator-given name (account, group, key, channel, admin token) cannot be used; undefined when it can. */
export function checkName(text: string): string | undefined {
  const found = CONTROL.exec(text);
  if (found === null) return undefined;
  const code = (found[0].codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0");
  return `must not contain control characters (U+${code} at character ${found.index + 1}); use printable text`;
}

/** A name without control characters (`checkName`), the problem named. */
export const PrintableName = v.pipe(
  v.string(),
  v.check(
    (s) => checkName(s) === undefined,
    (issue) => checkName(String(issue.input)) ?? "invalid name",
  ),
);

/** A model id pattern of a group (`modelx-*`), checked with the problem named. */
export const ModelPattern = v.pipe(
  v.string(),
  v.check(
    (s) => checkModelPattern(s) === undefined,
    (issue) => checkModelPattern(String(issue.input)) ?? "invalid model pattern",
  ),
);

/** A USD amount as a string or number, kept as its decimal text; `example` shows the form expected. */
export function usdText(example: string) {
  return v.pipe(
    v.union([v.string(), v.number()]),
    v.transform(String),
    v.check((s) => parseUsd(s).ok, `expected a USD amount ${example}`),
  );
}

/** A USD amount as a string ("2.50") or number (2.5), turned into nano-USD; the parse error names the problem. */
export const UsdNanos = v.pipe(
  v.union([v.string(), v.number()], 'expected a USD amount such as 10 or "2.50"'),
  v.transform(String),
  v.check(
    (s) => parseUsd(s).ok,
    (issue) => {
      const parsed = parseUsd(String(issue.input));
      return parsed.ok ? "invalid amount" : parsed.message;
    },
  ),
  v.transform((s): Nanos => {
    const parsed = parseUsd(s);
    if (!parsed.ok) throw new Error(parsed.message);
    return parsed.value;
  }),
);

/** A whole number from `min` (and up to `max` when given). */
export function wholeNumber(min: number, max?: number) {
  return max === undefined
    ? v.pipe(v.number(), v.integer(), v.minValue(min))
    : v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(max));
}
