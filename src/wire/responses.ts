// OpenAI Responses wire format (`POST /v1/responses`): the request schema (loose: unknown fields
// are kept for a same-protocol upstream) and its conversion to the neutral TextView.
import * as v from "valibot";
import {
  checkSampling,
  decode,
  Effort,
  JsonObject,
  PositiveInt,
  ResponseFormat,
  rejectMisplaced,
  requireObject,
  Temperature,
  TopP,
} from "./text-fields.ts";
import {
  contentText,
  joinText,
  type OutputFormatView,
  type TextView,
  type ToolChoiceView,
  type ToolView,
  toolsText,
} from "./text-view.ts";

const Part = v.looseObject({ type: v.string() });
const Content = v.union([v.string(), v.array(Part)]);

const MessageItem = v.looseObject({
  type: v.optional(v.literal("message")),
  role: v.picklist(["user", "assistant", "system", "developer"]),
  content: Content,
});
const FunctionCallItem = v.looseObject({
  type: v.literal("function_call"),
  call_id: v.string(),
  name: v.string(),
  arguments: v.string(),
});
const FunctionCallOutputItem = v.looseObject({
  type: v.literal("function_call_output"),
  call_id: v.string(),
  output: Content,
});
const OtherItem = v.looseObject({
  type: v.pipe(
    v.string(),
    v.check((t) => !["message", "function_call", "function_call_output"].includes(t), "malformed item"),
  ),
});
const InputItem = v.union([MessageItem, FunctionCallItem, FunctionCallOutputItem, OtherItem]);

const NestedTool = v.looseObject({
  type: v.literal("function"),
  function: v.looseObject({
    name: v.string(),
    description: v.optional(v.string()),
    parameters: v.optional(v.nullable(JsonObject)),
  }),
});
const FlatTool = v.looseObject({
  type: v.literal("function"),
  name: v.string(),
  description: v.optional(v.nullable(v.string())),
  parameters: v.optional(v.nullable(JsonObject)),
});
const OtherTool = v.looseObject({
  type: v.pipe(
    v.string(),
    v.check((t) => t !== "function", "a function tool needs name (or function.name)"),
  ),
});

const SchemaFormat = v.looseObject({ type: v.literal("json_schema"), name: v.string(), schema: JsonObject });
const TextFormat = v.union([
  v.looseObject({ type: v.literal("text") }),
  v.looseObject({ type: v.literal("json_object") }),
  SchemaFormat,
]);

export const ResponsesRequestSchema = v.looseObject({
  model: v.string(),
  input: v.union([v.string(), v.array(InputItem)]),
  instructions: v.optional(v.nullable(v.string())),
  temperature: Temperature,
  top_p: TopP,
  max_output_tokens: v.optional(v.nullable(PositiveInt)),
  reasoning: v.optional(
    v.nullable(
      v.looseObject({
        effort: v.optional(v.nullable(Effort)),
        summary: v.optional(v.nullable(v.string())),
      }),
    ),
  ),
  stream: v.optional(v.nullable(v.boolean())),
  tools: v.optional(v.nullable(v.array(v.union([NestedTool, FlatTool, OtherTool])))),
  tool_choice: v.optional(
    v.nullable(
      v.union([
        v.picklist(["none", "auto", "required"]),
        v.looseObject({ type: v.string(), name: v.optional(v.string()) }),
      ]),
    ),
  ),
  text: v.optional(v.nullable(v.looseObject({ format: v.optional(v.nullable(TextFormat)) }))),
  response_format: ResponseFormat,
});

export type ResponsesRequest = v.InferOutput<typeof ResponsesRequestSchema>;

/** Checks a parsed JSON body: misplaced reasoning field (400 upstream_error), shape (400), ranges (422). */
export function decodeResponsesRequest(json: unknown): ResponsesRequest {
  const body = requireObject(json);
  rejectMisplaced(
    body,
    "reasoning_effort",
    'on /v1/responses the effort is nested: send `"reasoning": {"effort": "high"}`.',
  );
  const request = decode(ResponsesRequestSchema, body);
  checkSampling(request);
  return request;
}

function toolsOf(request: ResponsesRequest): { view: ToolView[]; text: string } {
  const list: { name: string; description?: string | undefined; schema: unknown }[] = [];
  for (const tool of request.tools ?? []) {
    if ("function" in tool && typeof tool.function === "object") {
      const fn = tool.function as { name: string; description?: string; parameters?: unknown };
      list.push({ name: fn.name, description: fn.description, schema: fn.parameters ?? undefined });
    } else if ("name" in tool && typeof tool.name === "string") {
      const t = tool as { name: string; description?: string | null; parameters?: unknown };
      list.push({ name: t.name, description: t.description ?? undefined, schema: t.parameters ?? undefined });
    }
  }
  const view = list.map((t) => ({
    name: t.name,
    parameters: (t.schema ?? undefined) as ToolView["parameters"],
  }));
  return { view, text: toolsText(list) };
}

function toolChoiceOf(choice: ResponsesRequest["tool_choice"]): ToolChoiceView {
  if (choice === "none" || choice === "required") return { mode: choice };
  if (typeof choice === "object" && choice !== null && choice.type === "function" && choice.name) {
    return { mode: "named", name: choice.name };
  }
  return { mode: "auto" };
}

function formatOf(request: ResponsesRequest): OutputFormatView | undefined {
  const format = request.text?.format;
  if (format?.type === "json_schema" && "schema" in format)
    return { kind: "json_schema", schema: format.schema };
  if (format?.type === "json_object") return { kind: "json_object" };
  const legacy = request.response_format;
  if (legacy?.type === "json_schema" && legacy.json_schema?.schema) {
    return { kind: "json_schema", schema: legacy.json_schema.schema };
  }
  if (legacy?.type === "json_object") return { kind: "json_object" };
  return undefined;
}

interface Turns {
  text: string[];
  lastUser: string;
  endsWithToolResult: boolean;
}

function turnsOf(input: ResponsesRequest["input"]): Turns {
  if (typeof input === "string") return { text: [input], lastUser: input, endsWithToolResult: false };
  const turns: Turns = { text: [], lastUser: "", endsWithToolResult: false };
  for (const item of input) {
    const record = item as Record<string, unknown>;
    let text = "";
    if (record.type === "function_call") text = joinText([String(record.name), String(record.arguments)]);
    else if (record.type === "function_call_output" || "content" in record) {
      text = contentText(record.type === "function_call_output" ? record.output : record.content);
    } else text = contentText(record.summary);
    turns.text.push(text);
    if (record.role === "user") turns.lastUser = text;
    turns.endsWithToolResult = record.type === "function_call_output";
  }
  return turns;
}

/** The neutral view of a Responses request. */
export function viewOfResponses(request: ResponsesRequest): TextView {
  const tools = toolsOf(request);
  const turns = turnsOf(request.input);
  const effort = request.reasoning?.effort ?? undefined;
  return {
    protocol: "responses",
    model: request.model,
    stream: request.stream === true,
    promptText: joinText([request.instructions ?? undefined, ...turns.text, tools.text]),
    lastUserText: turns.lastUser,
    endsWithToolResult: turns.endsWithToolResult,
    tools: tools.view,
    toolChoice: toolChoiceOf(request.tool_choice),
    outputFormat: formatOf(request),
    maxOutputTokens: request.max_output_tokens ?? undefined,
    reasoning:
      effort === undefined
        ? undefined
        : { effort, budgetTokens: undefined, summary: Boolean(request.reasoning?.summary) },
    includeUsage: true,
  };
}
