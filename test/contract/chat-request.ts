// The strict contract of `POST /v1/chat/completions` request bodies, from OpenAI's API reference
// (CreateChatCompletionRequest): unknown or misplaced fields fail, enums are exact, and the rules
// the live API enforces beyond field types are checked (tool messages answer an assistant's
// tool_calls, assistant messages carry content or tool_calls, strict schemas qualify,
// stream_options only with stream, tool_choice only with tools, json_object with the word JSON).
import * as v from "valibot";
import { AnyObject, between, intAtLeast, OpenAIName, rule, strictRule } from "./schema-rules.ts";

const TextPart = v.strictObject({ type: v.literal("text"), text: v.string() });
const ImagePart = v.strictObject({
  type: v.literal("image_url"),
  image_url: v.strictObject({ url: v.string(), detail: v.optional(v.picklist(["auto", "low", "high"])) }),
});
const RefusalPart = v.strictObject({ type: v.literal("refusal"), refusal: v.string() });
const TextContent = v.union([v.string(), v.array(TextPart)]);

const ToolCall = v.strictObject({
  id: v.string(),
  type: v.literal("function"),
  function: v.strictObject({ name: v.string(), arguments: v.string() }),
});

const Message = v.variant("role", [
  v.strictObject({ role: v.literal("system"), content: TextContent, name: v.optional(v.string()) }),
  v.strictObject({ role: v.literal("developer"), content: TextContent, name: v.optional(v.string()) }),
  v.strictObject({
    role: v.literal("user"),
    content: v.union([v.string(), v.array(v.variant("type", [TextPart, ImagePart]))]),
    name: v.optional(v.string()),
  }),
  v.pipe(
    v.strictObject({
      role: v.literal("assistant"),
      content: v.optional(
        v.nullable(v.union([v.string(), v.array(v.variant("type", [TextPart, RefusalPart]))])),
      ),
      refusal: v.optional(v.nullable(v.string())),
      tool_calls: v.optional(v.pipe(v.array(ToolCall), v.minLength(1))),
      name: v.optional(v.string()),
    }),
    rule((m) =>
      (m.content !== undefined && m.content !== null) || m.tool_calls !== undefined || m.refusal
        ? undefined
        : "an assistant message needs content, tool_calls or a refusal",
    ),
  ),
  v.strictObject({ role: v.literal("tool"), content: TextContent, tool_call_id: v.string() }),
]);

const FunctionTool = v.pipe(
  v.strictObject({
    type: v.literal("function"),
    function: v.strictObject({
      name: OpenAIName,
      description: v.optional(v.string()),
      parameters: v.optional(AnyObject),
      strict: v.optional(v.nullable(v.boolean())),
    }),
  }),
  strictRule("a strict tool", (t) => ({ strict: t.function.strict, schema: t.function.parameters })),
);

const SchemaFormat = v.pipe(
  v.strictObject({
    type: v.literal("json_schema"),
    json_schema: v.strictObject({
      name: OpenAIName,
      description: v.optional(v.string()),
      schema: v.optional(AnyObject),
      strict: v.optional(v.nullable(v.boolean())),
    }),
  }),
  strictRule("strict: true", (f) => f.json_schema),
);

const Body = v.strictObject({
  model: v.string(),
  messages: v.pipe(v.array(Message), v.minLength(1)),
  frequency_penalty: v.optional(v.nullable(between(-2, 2))),
  presence_penalty: v.optional(v.nullable(between(-2, 2))),
  logit_bias: v.optional(v.nullable(v.record(v.string(), v.number()))),
  logprobs: v.optional(v.nullable(v.boolean())),
  top_logprobs: v.optional(v.nullable(between(0, 20))),
  max_completion_tokens: v.optional(v.nullable(intAtLeast(1))),
  max_tokens: v.optional(v.nullable(intAtLeast(1))),
  metadata: v.optional(v.nullable(v.record(v.string(), v.string()))),
  n: v.optional(v.nullable(intAtLeast(1))),
  parallel_tool_calls: v.optional(v.boolean()),
  prompt_cache_key: v.optional(v.string()),
  prompt_cache_retention: v.optional(v.nullable(v.picklist(["in-memory", "24h"]))),
  reasoning_effort: v.optional(v.nullable(v.picklist(["none", "minimal", "low", "medium", "high", "xhigh"]))),
  response_format: v.optional(
    v.variant("type", [
      v.strictObject({ type: v.literal("text") }),
      v.strictObject({ type: v.literal("json_object") }),
      SchemaFormat,
    ]),
  ),
  safety_identifier: v.optional(v.string()),
  seed: v.optional(v.nullable(v.number())),
  service_tier: v.optional(v.nullable(v.picklist(["auto", "default", "flex", "scale", "priority"]))),
  stop: v.optional(v.nullable(v.union([v.string(), v.pipe(v.array(v.string()), v.maxLength(4))]))),
  store: v.optional(v.nullable(v.boolean())),
  stream: v.optional(v.nullable(v.boolean())),
  stream_options: v.optional(
    v.nullable(
      v.strictObject({
        include_usage: v.optional(v.boolean()),
        include_obfuscation: v.optional(v.boolean()),
      }),
    ),
  ),
  temperature: v.optional(v.nullable(between(0, 2))),
  top_p: v.optional(v.nullable(between(0, 1))),
  tool_choice: v.optional(
    v.union([
      v.picklist(["none", "auto", "required"]),
      v.strictObject({ type: v.literal("function"), function: v.strictObject({ name: v.string() }) }),
    ]),
  ),
  tools: v.optional(v.array(FunctionTool)),
  user: v.optional(v.string()),
  verbosity: v.optional(v.nullable(v.picklist(["low", "medium", "high"]))),
});

type Body = v.InferOutput<typeof Body>;

/** Every tool message answers a tool call of the assistant message before the tool messages. */
function toolPairing(body: Body): string | undefined {
  let open = new Set<string>();
  for (const [i, m] of body.messages.entries()) {
    if (m.role === "tool") {
      if (!open.has(m.tool_call_id))
        return `messages[${i}]: tool message ${m.tool_call_id} answers no tool call`;
      open.delete(m.tool_call_id);
      continue;
    }
    if (open.size > 0) return `messages[${i}]: tool calls ${[...open].join(", ")} are not answered`;
    open = new Set(m.role === "assistant" ? (m.tool_calls ?? []).map((c) => c.id) : []);
  }
  return undefined;
}

function jsonWordMissing(body: Body): string | undefined {
  if (body.response_format?.type !== "json_object") return undefined;
  return /json/i.test(JSON.stringify(body.messages))
    ? undefined
    : "response_format json_object needs the word JSON in the messages";
}

/** Fields allowed only with another: stream_options with stream, tool fields with tools. */
function optionsWithoutTheirField(body: Body): string | undefined {
  if (body.stream_options != null && body.stream !== true)
    return "stream_options is only allowed with stream: true";
  const tools = (body.tools ?? []).length > 0;
  if (body.tool_choice !== undefined && !tools) return "tool_choice is only allowed when tools are specified";
  if (body.parallel_tool_calls !== undefined && !tools)
    return "parallel_tool_calls is only allowed when tools are specified";
  return undefined;
}

/** The strict schema of a Chat Completions request body sent upstream. */
export const ChatRequestContract = v.pipe(
  Body,
  rule(toolPairing),
  rule(jsonWordMissing),
  rule(optionsWithoutTheirField),
);
