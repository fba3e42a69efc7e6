// What an upstream's complete answer, or the event that starts a tool call in its stream, must hold
// before it is translated into another protocol: each tool call's id and name, checked with loose
// valibot schemas (unknown fields kept, only what a translation cannot do without required). A
// call without them would reach the client as a call it cannot answer (its id was once written as
// the text "undefined"). Everything else in an answer is optional in every protocol and read
// loosely (narrow.ts); a missing required field is a typed error naming it (`missing_field`),
// which the relay turns into a 502, or in a stream an error event naming it (the client's protocol
// ends its stream with an `upstream_failed` error).
import * as v from "valibot";
import { issuePath } from "../../base/validation.ts";
import type { Converted } from "./convert.ts";
import type { Obj } from "./narrow.ts";

/** A schema a tool call must meet (loose: unknown fields kept). */
export type Checked = v.GenericSchema<unknown, Obj>;

/** A Chat `message.tool_calls[]` entry of a complete answer. */
export const ChatToolCall: Checked = v.looseObject({
  id: v.string(),
  function: v.looseObject({ name: v.string() }),
});
/**
 * The first `delta.tool_calls[]` entry of a Chat stream's tool call: its name (a compatible server
 * may leave out the id; the reader then names the call by its index, as before).
 */
export const ChatToolCallStart: Checked = v.looseObject({ function: v.looseObject({ name: v.string() }) });
/** A Messages `tool_use` content block (of an answer, or a stream's `content_block_start`). */
export const MessagesToolUse: Checked = v.looseObject({ id: v.string(), name: v.string() });
/** A Responses `function_call` output item (of an answer, or a stream's `output_item.added`). */
export const ResponsesFunctionCall: Checked = v.looseObject({ call_id: v.string(), name: v.string() });

/** What `item` (at `path`) lacks of `schema`, each field named by its path; undefined when nothing. */
export function lacking(schema: Checked, item: unknown, path: string): string | undefined {
  const parsed = v.safeParse(schema, item);
  if (parsed.success) return undefined;
  return parsed.issues
    .map((issue) => {
      const field = issuePath(issue);
      return `${field === "" ? path : `${path}.${field}`} (${issue.message})`;
    })
    .join("; ");
}

/** The error event of a stream whose tool call lacks `what` (see `lacking`). */
export function lackingEvent(protocol: string, what: string): { type: "error"; message: string } {
  return { type: "error", message: `The upstream's ${protocol} stream has a tool call that lacks ${what}.` };
}

/** The tool calls of an answer in one protocol (its record's): where each is, and the schema it must meet. */
export type ReplyToolCalls = (json: Obj) => { path: string; item: unknown; schema: Checked }[];

/** The answer as it came, or the first required field it lacks, named by its path. */
export function checkReply(toolCalls: ReplyToolCalls, json: Obj): Converted<Obj> {
  for (const { path, item, schema } of toolCalls(json)) {
    const missing = lacking(schema, item, path);
    if (missing !== undefined)
      return { ok: false, error: { kind: "missing_field", message: `a tool call lacks ${missing}` } };
  }
  return { ok: true, value: json };
}
