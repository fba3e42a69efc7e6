// The strict contract of `POST /v1/responses` request bodies, from OpenAI's API reference
// (CreateResponse): unknown or misplaced fields fail, enums are exact, and the rules the live API
// enforces beyond the field types are checked (max_output_tokens ≥ 16, assistant text only as
// string content or an output message item, reasoning items with their id, strict schemas that
// qualify, every function_call_output answering an earlier function_call).
import * as v from "valibot";
import { AnyObject, between, intAtLeast, OpenAIName, rule, strictRule } from "./schema-rules.ts";

const Status = v.picklist(["in_progress", "completed", "incomplete"]);

const InputText = v.strictObject({ type: v.literal("input_text"), text: v.string() });
const InputImage = v.strictObject({
  type: v.literal("input_image"),
  image_url: v.optional(v.nullable(v.string())),
  file_id: v.optional(v.nullable(v.string())),
  detail: v.picklist(["low", "high", "auto", "original"]),
});
const InputFile = v.strictObject({
  type: v.literal("input_file"),
  file_id: v.optional(v.nullable(v.string())),
  file_data: v.optional(v.string()),
  file_url: v.optional(v.string()),
  filename: v.optional(v.string()),
});
const InputContent = v.variant("type", [InputText, InputImage, InputFile]);

/** A message the client writes: user, system or developer, string or input parts. */
const InputMessage = v.strictObject({
  type: v.optional(v.literal("message")),
  role: v.picklist(["user", "system", "developer"]),
  content: v.union([v.string(), v.array(InputContent)]),
  status: v.optional(Status),
});
/** Assistant history in the easy form: string content only. */
const AssistantText = v.strictObject({
  type: v.optional(v.literal("message")),
  role: v.literal("assistant"),
  content: v.string(),
});
const OutputText = v.strictObject({
  type: v.literal("output_text"),
  text: v.string(),
  annotations: v.array(AnyObject),
  logprobs: v.optional(v.array(AnyObject)),
});
const Refusal = v.strictObject({ type: v.literal("refusal"), refusal: v.string() });
/** Assistant history as an output message item (as the API returned it). */
const OutputMessage = v.strictObject({
  id: v.string(),
  type: v.literal("message"),
  role: v.literal("assistant"),
  content: v.array(v.variant("type", [OutputText, Refusal])),
  status: Status,
});
const FunctionCall = v.strictObject({
  type: v.literal("function_call"),
  id: v.optional(v.string()),
  call_id: v.string(),
  name: v.string(),
  arguments: v.string(),
  status: v.optional(Status),
});
const FunctionCallOutput = v.strictObject({
  type: v.literal("function_call_output"),
  id: v.optional(v.nullable(v.string())),
  call_id: v.string(),
  output: v.union([v.string(), v.array(InputContent)]),
  status: v.optional(v.nullable(Status)),
});
const Reasoning = v.strictObject({
  type: v.literal("reasoning"),
  id: v.string(),
  summary: v.array(v.strictObject({ type: v.literal("summary_text"), text: v.string() })),
  content: v.optional(v.array(v.strictObject({ type: v.literal("reasoning_text"), text: v.string() }))),
  encrypted_content: v.optional(v.nullable(v.string())),
  status: v.optional(Status),
});

const Item = v.union([
  InputMessage,
  AssistantText,
  OutputMessage,
  FunctionCall,
  FunctionCallOutput,
  Reasoning,
]);

const FunctionTool = v.pipe(
  v.strictObject({
    type: v.literal("function"),
    name: OpenAIName,
    description: v.optional(v.nullable(v.string())),
    parameters: v.nullable(AnyObject),
    strict: v.nullable(v.boolean()),
  }),
  strictRule("a strict tool", (t) => ({ strict: t.strict, schema: t.parameters })),
);

const SchemaFormat = v.pipe(
  v.strictObject({
    type: v.literal("json_schema"),
    name: OpenAIName,
    schema: AnyObject,
    description: v.optional(v.string()),
    strict: v.optional(v.nullable(v.boolean())),
  }),
  strictRule("strict: true", (f) => f),
);
const TextConfig = v.strictObject({
  format: v.optional(
    v.variant("type", [
      v.strictObject({ type: v.literal("text") }),
      v.strictObject({ type: v.literal("json_object") }),
      SchemaFormat,
    ]),
  ),
  verbosity: v.optional(v.nullable(v.picklist(["low", "medium", "high"]))),
});

const ToolChoice = v.union([
  v.picklist(["none", "auto", "required"]),
  v.strictObject({ type: v.literal("function"), name: v.string() }),
]);

const Include = v.picklist([
  "reasoning.encrypted_content",
  "message.output_text.logprobs",
  "message.input_image.image_url",
  "file_search_call.results",
  "web_search_call.action.sources",
  "code_interpreter_call.outputs",
  "computer_call_output.output.image_url",
]);

const Body = v.strictObject({
  model: v.string(),
  input: v.union([v.string(), v.array(Item)]),
  instructions: v.optional(v.nullable(v.string())),
  include: v.optional(v.nullable(v.array(Include))),
  max_output_tokens: v.optional(v.nullable(intAtLeast(16, "max_output_tokens must be at least 16"))),
  max_tool_calls: v.optional(v.nullable(intAtLeast(1))),
  metadata: v.optional(v.nullable(v.record(v.string(), v.string()))),
  parallel_tool_calls: v.optional(v.nullable(v.boolean())),
  previous_response_id: v.optional(v.nullable(v.string())),
  prompt_cache_key: v.optional(v.string()),
  prompt_cache_retention: v.optional(v.nullable(v.picklist(["in-memory", "24h"]))),
  reasoning: v.optional(
    v.nullable(
      v.strictObject({
        effort: v.optional(v.nullable(v.picklist(["none", "minimal", "low", "medium", "high", "xhigh"]))),
        summary: v.optional(v.nullable(v.picklist(["auto", "concise", "detailed"]))),
      }),
    ),
  ),
  safety_identifier: v.optional(v.string()),
  service_tier: v.optional(v.nullable(v.picklist(["auto", "default", "flex", "scale", "priority"]))),
  store: v.optional(v.nullable(v.boolean())),
  stream: v.optional(v.nullable(v.boolean())),
  stream_options: v.optional(v.nullable(v.strictObject({ include_obfuscation: v.optional(v.boolean()) }))),
  temperature: v.optional(v.nullable(between(0, 2))),
  text: v.optional(TextConfig),
  tool_choice: v.optional(ToolChoice),
  tools: v.optional(v.array(FunctionTool)),
  top_logprobs: v.optional(v.nullable(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(20)))),
  top_p: v.optional(v.nullable(between(0, 1))),
  truncation: v.optional(v.nullable(v.picklist(["auto", "disabled"]))),
  user: v.optional(v.string()),
  background: v.optional(v.nullable(v.boolean())),
});

type Body = v.InferOutput<typeof Body>;

/** Every function_call_output answers a function_call earlier in the input. */
function unansweredOutput(body: Body): string | undefined {
  if (typeof body.input === "string") return undefined;
  const calls = new Set<string>();
  for (const item of body.input) {
    if (item.type === "function_call") calls.add(item.call_id);
    if (item.type === "function_call_output" && !calls.has(item.call_id))
      return `function_call_output ${item.call_id} has no function_call before it`;
  }
  return undefined;
}

/** A named tool_choice names a tool that is sent. */
function unknownChoice(body: Body): string | undefined {
  const choice = body.tool_choice;
  if (typeof choice !== "object") return undefined;
  return (body.tools ?? []).some((t) => t.name === choice.name)
    ? undefined
    : `tool_choice names "${choice.name}", which is not in tools`;
}

/** `json_object` needs the word JSON somewhere in the input (the API refuses it otherwise). */
function jsonWordMissing(body: Body): string | undefined {
  if (body.text?.format?.type !== "json_object") return undefined;
  return /json/i.test(`${body.instructions ?? ""} ${JSON.stringify(body.input)}`)
    ? undefined
    : "text.format json_object needs the word JSON in the input";
}

/** The strict schema of a Responses request body sent upstream. */
export const ResponsesRequestContract = v.pipe(
  Body,
  rule(unansweredOutput),
  rule(unknownChoice),
  rule(jsonWordMissing),
  rule((b) =>
    b.stream_options == null || b.stream === true
      ? undefined
      : "stream_options is only allowed with stream: true",
  ),
);
