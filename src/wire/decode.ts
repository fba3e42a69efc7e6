// The one decode step of request bodies, text and images alike: a valibot schema's issues become
// a GatewayError naming the first bad field. One rule for the status: a number outside its range
// (a `minValue` / `maxValue` issue) is 422 (docs/design.md: "a number outside its range"), any
// other violation (missing field, wrong type, bad enum value, too long) is 400. Range checks that
// need more than one field (temperature, top_p, Chat `n`, thinking budgets) run after this step and
// follow the same rule.
import * as v from "valibot";
import { describeIssues, issuePath } from "../base/validation.ts";
import { GatewayError } from "./errors.ts";

/** Issue types that mean "a number outside its range". */
const RANGE_ISSUES: ReadonlySet<string> = new Set(["min_value", "max_value"]);

/** Validates `input` against `schema`; a failure is a 400 or 422 naming the first bad field. */
export function parseOrThrow<S extends v.GenericSchema>(schema: S, input: unknown): v.InferOutput<S> {
  const result = v.safeParse(schema, input);
  if (result.success) return result.output;
  const first = result.issues[0];
  throw new GatewayError(
    RANGE_ISSUES.has(first.type) ? "invalid_value" : "invalid_request",
    describeIssues(result.issues.slice(0, 3)),
    { param: issuePath(first) || null },
  );
}
