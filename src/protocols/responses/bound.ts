// Where a Responses body holds input beyond its prompt text (pipeline/input-bound.ts tallies it).

import { arr, type Obj, obj, str } from "../../wire/translate/narrow.ts";
import type { BodyTally } from "../adapter.ts";

/** Fields of a Responses request that make the upstream read stored items the gateway cannot see. */
const STORED = ["previous_response_id", "conversation", "prompt"] as const;

function item(tally: BodyTally, param: string, item: Obj): void {
  switch (item.type ?? "message") {
    case "message":
      tally.content(`${param}.content`, item.content);
      return;
    case "function_call":
      return;
    case "function_call_output":
      tally.content(`${param}.output`, item.output);
      return;
    case "reasoning":
      tally.extra(str(item.encrypted_content));
      tally.json(item.content);
      return;
    case "computer_call_output": {
      const output = obj(item.output);
      tally.image(`${param}.output`, str(output.image_url), str(output.detail));
      return;
    }
    case "item_reference":
      tally.unbound(param);
      return;
    default:
      tally.json(item);
  }
}

export function responsesBound(tally: BodyTally, body: Obj): void {
  for (const field of STORED) {
    const value = body[field];
    if (value !== undefined && value !== null) tally.unbound(field);
  }
  // Instructions are a message of their own to the model.
  if (typeof body.instructions === "string") tally.frame("message");
  if (typeof body.input === "string") tally.frame("message");
  arr(body.input).forEach((raw, i) => {
    tally.frame("message");
    item(tally, `input[${i}]`, obj(raw));
  });
  arr(body.tools).forEach((raw, i) => {
    const tool = obj(raw);
    if (tool.type !== "function") tally.typedTool(`tools[${i}]`, tool);
    else if (tool.function !== undefined) tally.functionTool(obj(tool.function).parameters);
    else tally.functionTool(tool.parameters);
  });
  tally.json(obj(body.text).format);
  tally.json(obj(body.response_format).json_schema);
}
