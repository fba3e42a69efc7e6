// valibot schemas of admin API inputs shared by several resources: times, names, counts, and the
// amounts, CIDRs and model patterns the config reads the same way (src/config/blocks.ts).
import * as v from "valibot";

import { PrintableName } from "../config/blocks.ts";

export { Cidr, ModelPattern, UsdNanos as Usd } from "../config/blocks.ts";

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** A future RFC 3339 time, turned into ms since the epoch. */
export const FutureTime = v.pipe(
  v.string(),
  v.regex(RFC3339, "expected an RFC 3339 time such as 2027-01-31T00:00:00Z"),
  v.transform(Date.parse),
  v.check((at) => at > Date.now(), "is in the past; give a future time"),
);

/** The name of an account or a group: printable, not empty. */
export const Name = v.pipe(PrintableName, v.trim(), v.minLength(1, "must not be empty"), v.maxLength(100));

/** A key's name: printable, may be empty. */
export const KeyName = v.pipe(PrintableName, v.maxLength(100));

export const PositiveInt = v.pipe(v.number(), v.integer("expected a whole number"), v.minValue(1));
