// Where a Chat Completions body holds input beyond its prompt text (pipeline/input-bound.ts tallies it).

import { arr, type Obj, obj, str } from "../../wire/translate/narrow.ts";
import type { BodyTally } from "../adapter.ts";

export function chatBound(tally: BodyTally, body: Obj): void {
  arr(body.messages).forEach((raw, i) => {
    const m = obj(raw);
    tally.frame("message");
    if (typeof m.name === "string") {
      tally.frame("name");
      tally.extra(m.name);
    }
    tally.content(`messages[${i}].content`, m.content);
    tally.extra(str(m.refusal));
    if (m.audio !== undefined && m.audio !== null) tally.json(m.audio);
  });
  arr(body.tools).forEach((raw, i) => {
    const tool = obj(raw);
    if (tool.type === "function") tally.functionTool(obj(tool.function).parameters);
    else tally.typedTool(`tools[${i}]`, tool);
  });
  tally.json(obj(body.response_format).json_schema);
}
