// OpenAI Responses wire format (`POST /v1/responses`): the request schema (loose: unknown fields
// are kept for a same-protocol upstream) and its decode; its conversions to the internal form are
// in translate/responses-request.ts.
import * as v from "valibot";
import * as fields from "./text-fields.ts";

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
    parameters: v.optional(v.nullable(fields.JsonObject)),
  }),
});
const FlatTool = v.looseObject({
  type: v.literal("function"),
  name: v.string(),
  description: v.optional(v.nullable(v.string())),
  parameters: v.optional(v.nullable(fields.JsonObject)),
});
const OtherTool = v.looseObject({
  type: v.pipe(
    v.string(),
    v.check((t) => t !== "function", "a function tool needs name (or function.name)"),
  ),
});

const SchemaFormat = v.looseObject({
  type: v.literal("json_schema"),
  name: v.string(),
  schema: fields.JsonObject,
});
const TextFormat = v.union([
  v.looseObject({ type: v.literal("text") }),
  v.looseObject({ type: v.literal("json_object") }),
  SchemaFormat,
]);

export const ResponsesRequestSchema = v.looseObject({
  model: v.string(),
  input: v.union([v.string(), v.array(InputItem)]),
  instructions: v.optional(v.nullable(v.string())),
  ...fields.SamplingFields,
  max_output_tokens: v.optional(v.nullable(fields.PositiveInt)),
  reasoning: v.optional(
    v.nullable(
      v.looseObject({
        effort: v.optional(v.nullable(fields.Effort)),
        summary: v.optional(v.nullable(v.string())),
      }),
    ),
  ),
  stream: v.optional(v.nullable(v.boolean())),
  tools: v.optional(v.nullable(v.array(v.union([NestedTool, FlatTool, OtherTool])))),
  /** The cap on hosted tool calls, which admission reserves for (src/billing/cost.ts rule 7). */
  max_tool_calls: v.optional(v.nullable(fields.PositiveInt)),
  tool_choice: v.optional(
    v.nullable(
      v.union([
        v.picklist(["none", "auto", "required"]),
        v.looseObject({ type: v.string(), name: v.optional(v.string()) }),
      ]),
    ),
  ),
  text: v.optional(v.nullable(v.looseObject({ format: v.optional(v.nullable(TextFormat)) }))),
  response_format: fields.ResponseFormat,
});

export type ResponsesRequest = v.InferOutput<typeof ResponsesRequestSchema>;

/** Checks a parsed JSON body: misplaced reasoning field (400 upstream_error), shape (400), ranges (422). */
export function decodeResponsesRequest(json: unknown): ResponsesRequest {
  return fields.decodeOpenAIText(ResponsesRequestSchema, json, {
    field: "reasoning_effort",
    hint: 'on /v1/responses the effort is nested: send `"reasoning": {"effort": "high"}`.',
  });
}
