// valibot schemas of admin API inputs shared by several resources: amounts, CIDRs, times, names.
import * as v from "valibot";
import { checkCidr } from "../base/ip.ts";
import { parseUsd } from "../base/money.ts";
import { checkModelPattern } from "../catalog/groups.ts";
import type { Nanos } from "../types.ts";

/** A USD amount as a string ("2.50") or number (2.5), turned into nano-USD. */
export const Usd = v.pipe(
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

export const Cidr = v.pipe(
  v.string(),
  v.check(
    (s) => checkCidr(s) === undefined,
    (issue) => checkCidr(String(issue.input)) ?? "invalid CIDR",
  ),
);

export const ModelPattern = v.pipe(
  v.string(),
  v.check(
    (s) => checkModelPattern(s) === undefined,
    (issue) => checkModelPattern(String(issue.input)) ?? "invalid model pattern",
  ),
);

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** A future RFC 3339 time, turned into ms since the epoch. */
export const FutureTime = v.pipe(
  v.string(),
  v.regex(RFC3339, "expected an RFC 3339 time such as 2027-01-31T00:00:00Z"),
  v.transform(Date.parse),
  v.check((at) => at > Date.now(), "is in the past; give a future time"),
);

export const Name = v.pipe(v.string(), v.trim(), v.minLength(1, "must not be empty"), v.maxLength(100));

export const PositiveInt = v.pipe(v.number(), v.integer("expected a whole number"), v.minValue(1));
