// What an upstream's complete answer must hold before it is translated into another protocol: each
// tool call's id and name, checked with loose valibot schemas (unknown fields kept, only what a
// translation cannot do without required). A call without them would reach the client as a call
// it cannot answer (its id was once written as the text "undefined"). Everything else in an
// answer is optional in every protocol and read loosely (narrow.ts); a missing required field is
// a typed error naming it (`missing_field`), which the relay turns into a 502.
import * as v from "valibot";
import { isObject } from "../../base/plain-object.ts";
import { issuePath } from "../../base/validation.ts";
import type { TextProtocol } from "../text-form.ts";
import type { Converted } from "./convert.ts";
import { arr, type Obj, obj } from "./narrow.ts";

/** A Chat `message.tool_calls[]` entry. */
const ChatToolCall = v.looseObject({ id: v.string(), function: v.looseObject({ name: v.string() }) });
/** A Messages `tool_use` content block. */
const MessagesToolUse = v.looseObject({ id: v.string(), name: v.string() });
/** A Responses `function_call` output item. */
const ResponsesFunctionCall = v.looseObject({ call_id: v.string(), name: v.string() });

type Checked = v.GenericSchema<unknown, Obj>;

/** The tool calls of an answer in one protocol: where each is, and the schema it must meet. */
type ToolCalls = (json: Obj) => { path: string; item: unknown; schema: Checked }[];

const TOOL_CALLS: Record<TextProtocol, ToolCalls> = {
  chat: (json) =>
    arr(json.choices).flatMap((choice, c) =>
      arr(obj(obj(choice).message).tool_calls).map((item, i) => ({
        path: `choices[${c}].message.tool_calls[${i}]`,
        item,
        schema: ChatToolCall,
      })),
    ),
  messages: (json) =>
    arr(json.content).flatMap((block, i) =>
      isObject(block) && block.type === "tool_use"
        ? [{ path: `content[${i}]`, item: block, schema: MessagesToolUse }]
        : [],
    ),
  responses: (json) =>
    arr(json.output).flatMap((item, i) =>
      isObject(item) && item.type === "function_call"
        ? [{ path: `output[${i}]`, item, schema: ResponsesFunctionCall }]
        : [],
    ),
};

/** The answer as it came, or the first required field it lacks, named by its path. */
export function checkReply(from: TextProtocol, json: Obj): Converted<Obj> {
  for (const { path, item, schema } of TOOL_CALLS[from](json)) {
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
