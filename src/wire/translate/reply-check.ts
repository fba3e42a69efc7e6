// What an upstream's complete answer must hold before it is translated into another protocol: each
// tool call's id and name, checked with loose valibot schemas (unknown fields kept, only what a
// translation cannot do without required). A call without them would reach the client as a call
// it cannot answer (its id was once written as the text "undefined"). Everything else in an
// answer is optional in every protocol and read loosely (narrow.ts); a missing required field is
// a typed error naming it (`missing_field`), which the relay turns into a 502.
import * as v from "valibot";
import { issuePath } from "../../base/validation.ts";
import type { Converted } from "./convert.ts";
import type { Obj } from "./narrow.ts";

/** A schema a tool call must meet (loose: unknown fields kept). */
export type Checked = v.GenericSchema<unknown, Obj>;

/** The tool calls of an answer in one protocol (its record's): where each is, and the schema it must meet. */
export type ReplyToolCalls = (json: Obj) => { path: string; item: unknown; schema: Checked }[];

/** The answer as it came, or the first required field it lacks, named by its path. */
export function checkReply(toolCalls: ReplyToolCalls, json: Obj): Converted<Obj> {
  for (const { path, item, schema } of toolCalls(json)) {
    const parsed = v.safeParse(schema, item);
    if (parsed.success) continue;
    const message = parsed.issues
      .map((issue) => {
        const field = issuePath(issue);
        return `${field === "" ? path : `${path}.${field}`} (${issue.message})`;
      })
      .join("; ");
    return { ok: false, error: { kind: "missing_field", message: `a tool call lacks ${message}` } };
  }
  return { ok: true, value: json };
}
