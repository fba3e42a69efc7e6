// Where a Messages body holds input beyond its prompt text (pipeline/input-bound.ts tallies it).

import { arr, type Obj, obj } from "../../wire/translate/narrow.ts";
import type { BodyTally } from "../adapter.ts";

export function messagesBound(tally: BodyTally, body: Obj): void {
  if (body.mcp_servers !== undefined && arr(body.mcp_servers).length > 0) {
    throw tally.refuse(
      "mcp_servers",
      "an MCP server's tool definitions are read by the upstream and billed as input this gateway cannot count; define the tools in tools instead",
    );
  }
  if (body.system !== undefined) tally.frame("message");
  tally.content("system", body.system);
  arr(body.messages).forEach((raw, i) => {
    tally.frame("message");
    tally.content(`messages[${i}].content`, obj(raw).content);
  });
  const tools = arr(body.tools);
  if (tools.length > 0) tally.frame("toolPrompt");
  tools.forEach((raw, i) => {
    const tool = obj(raw);
    if (tool.type === undefined || tool.type === "custom") tally.functionTool(tool.input_schema);
    else tally.typedTool(`tools[${i}]`, tool);
  });
  tally.json(obj(body.output_config).format);
}
