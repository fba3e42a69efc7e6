// The strict contract of Anthropic `POST /v1/messages` request bodies, from Anthropic's API
// reference and documentation: unknown or misplaced fields fail, enums are exact, and the rules the
// live API enforces beyond field types are checked: temperature and top_p not together; thinking
// with neither a forced tool_choice nor non-default sampling; budget below max_tokens; in a tool
// loop with thinking on, the assistant turn starts with its thinking block; every tool_result
// answers a tool_use of the turn before and leads its message; structured output schemas with
// additionalProperties: false on every object; no empty text blocks or messages.
import * as v from "valibot";
import { AnyObject, anthropicFormatViolation, between, intAtLeast, rule } from "./schema-rules.ts";

const CacheControl = v.nullable(
  v.strictObject({ type: v.literal("ephemeral"), ttl: v.optional(v.picklist(["5m", "1h"])) }),
);
const Text = v.strictObject({
  type: v.literal("text"),
  text: v.pipe(v.string(), v.minLength(1, "text blocks must be non-empty")),
  cache_control: v.optional(CacheControl),
  citations: v.optional(v.nullable(v.array(AnyObject))),
});
const Image = v.strictObject({
  type: v.literal("image"),
  source: v.variant("type", [
    v.strictObject({
      type: v.literal("base64"),
      media_type: v.picklist(["image/jpeg", "image/png", "image/gif", "image/webp"]),
      data: v.string(),
    }),
    v.strictObject({ type: v.literal("url"), url: v.string() }),
  ]),
  cache_control: v.optional(CacheControl),
});
const Thinking = v.strictObject({ type: v.literal("thinking"), thinking: v.string(), signature: v.string() });
const RedactedThinking = v.strictObject({ type: v.literal("redacted_thinking"), data: v.string() });
const ToolUse = v.strictObject({
  type: v.literal("tool_use"),
  id: v.string(),
  name: v.string(),
  input: AnyObject,
  cache_control: v.optional(CacheControl),
});
const ToolResult = v.strictObject({
  type: v.literal("tool_result"),
  tool_use_id: v.string(),
  content: v.optional(v.union([v.string(), v.array(v.variant("type", [Text, Image]))])),
  is_error: v.optional(v.boolean()),
  cache_control: v.optional(CacheControl),
});

const Message = v.variant("role", [
  v.strictObject({
    role: v.literal("user"),
    content: v.union([
      v.pipe(v.string(), v.minLength(1)),
      v.pipe(v.array(v.variant("type", [Text, Image, ToolResult])), v.minLength(1)),
    ]),
  }),
  v.strictObject({
    role: v.literal("assistant"),
    content: v.union([
      v.pipe(v.string(), v.minLength(1)),
      v.pipe(v.array(v.variant("type", [Text, Thinking, RedactedThinking, ToolUse])), v.minLength(1)),
    ]),
  }),
]);

const Tool = v.strictObject({
  type: v.optional(v.literal("custom")),
  name: v.pipe(v.string(), v.regex(/^[a-zA-Z0-9_-]{1,128}$/)),
  description: v.optional(v.string()),
  input_schema: v.looseObject({ type: v.literal("object") }),
  cache_control: v.optional(CacheControl),
  strict: v.optional(v.boolean()),
});

const Parallel = { disable_parallel_tool_use: v.optional(v.boolean()) };
const ToolChoice = v.variant("type", [
  v.strictObject({ type: v.literal("auto"), ...Parallel }),
  v.strictObject({ type: v.literal("any"), ...Parallel }),
  v.strictObject({ type: v.literal("tool"), name: v.string(), ...Parallel }),
  v.strictObject({ type: v.literal("none") }),
]);

const Display = { display: v.optional(v.picklist(["summarized", "omitted"])) };
const ThinkingConfig = v.variant("type", [
  v.strictObject({ type: v.literal("enabled"), budget_tokens: intAtLeast(1024), ...Display }),
  v.strictObject({ type: v.literal("disabled") }),
  v.strictObject({ type: v.literal("adaptive"), ...Display }),
]);

const OutputConfig = v.strictObject({
  effort: v.optional(v.nullable(v.picklist(["low", "medium", "high", "xhigh", "max"]))),
  format: v.optional(
    v.nullable(
      v.pipe(
        v.strictObject({ type: v.literal("json_schema"), schema: AnyObject }),
        rule((f) => {
          const problem = anthropicFormatViolation(f.schema);
          return problem === undefined ? undefined : `output_config.format.schema ${problem}`;
        }),
      ),
    ),
  ),
});

const Body = v.strictObject({
  model: v.string(),
  max_tokens: intAtLeast(1),
  messages: v.pipe(v.array(Message), v.minLength(1)),
  system: v.optional(v.union([v.string(), v.array(Text)])),
  metadata: v.optional(v.strictObject({ user_id: v.optional(v.nullable(v.string())) })),
  output_config: v.optional(OutputConfig),
  service_tier: v.optional(v.picklist(["auto", "standard_only"])),
  stop_sequences: v.optional(v.array(v.string())),
  stream: v.optional(v.boolean()),
  temperature: v.optional(between(0, 1)),
  top_p: v.optional(between(0, 1)),
  top_k: v.optional(intAtLeast(0)),
  thinking: v.optional(ThinkingConfig),
  tool_choice: v.optional(ToolChoice),
  tools: v.optional(v.array(Tool)),
  // Fields a same-protocol client may send, passed through as they are (shapes not checked here).
  cache_control: v.optional(CacheControl),
  container: v.optional(v.nullable(v.string())),
  context_management: v.optional(v.nullable(AnyObject)),
  inference_geo: v.optional(v.nullable(v.string())),
  mcp_servers: v.optional(v.array(AnyObject)),
});

type Body = v.InferOutput<typeof Body>;
type Block = Exclude<Body["messages"][number]["content"], string>[number];

function blocks(m: Body["messages"][number]): Block[] {
  return typeof m.content === "string" ? [] : m.content;
}

function thinkingOn(body: Body): boolean {
  return body.thinking?.type === "enabled" || body.thinking?.type === "adaptive";
}

/** Tool results answer the previous assistant turn's tool_use blocks and come first in their message. */
function toolPairing(body: Body): string | undefined {
  let open = new Set<string>();
  for (const [i, m] of body.messages.entries()) {
    const list = blocks(m);
    if (m.role === "user") {
      const results = list.filter((b) => b.type === "tool_result");
      if (list.slice(0, results.length).some((b) => b.type !== "tool_result"))
        return `messages[${i}]: tool_result blocks must come first`;
      for (const r of results) {
        if (!open.has(r.tool_use_id))
          return `messages[${i}]: tool_result ${r.tool_use_id} answers no tool_use`;
        open.delete(r.tool_use_id);
      }
      if (open.size > 0) return `messages[${i}]: tool_use ${[...open].join(", ")} has no tool_result`;
      continue;
    }
    if (open.size > 0) return `messages[${i}]: tool_use ${[...open].join(", ")} has no tool_result`;
    open = new Set(list.flatMap((b) => (b.type === "tool_use" ? [b.id] : [])));
  }
  return undefined;
}

/** With thinking on, an assistant turn that called tools and is being answered starts with thinking. */
function thinkingInToolLoop(body: Body): string | undefined {
  if (!thinkingOn(body)) return undefined;
  const last = body.messages.at(-1);
  if (last?.role !== "user" || !blocks(last).some((b) => b.type === "tool_result")) return undefined;
  const turn = body.messages.at(-2);
  const first = turn === undefined ? undefined : blocks(turn)[0];
  return first?.type === "thinking" || first?.type === "redacted_thinking"
    ? undefined
    : "thinking is on in a tool loop, but the assistant turn answered does not start with a thinking block";
}

function thinkingRules(body: Body): string | undefined {
  if (!thinkingOn(body)) return undefined;
  const choice = body.tool_choice?.type;
  if (choice === "any" || choice === "tool") return `thinking cannot be used with tool_choice ${choice}`;
  if (body.temperature !== undefined && body.temperature !== 1)
    return "thinking needs temperature 1 or unset";
  if (body.top_p !== undefined && body.top_p < 0.95)
    return "thinking needs top_p between 0.95 and 1, or unset";
  if (body.top_k !== undefined) return "thinking cannot be used with top_k";
  if (body.thinking?.type === "enabled" && body.thinking.budget_tokens >= body.max_tokens)
    return "thinking.budget_tokens must be less than max_tokens";
  return undefined;
}

/** Tool blocks in the conversation need tools defined (the API refuses them otherwise). */
function toolsUndefined(body: Body): string | undefined {
  if ((body.tools ?? []).length > 0) return undefined;
  const used = body.messages.some((m) =>
    blocks(m).some((b) => b.type === "tool_use" || b.type === "tool_result"),
  );
  return used ? "requests with tool_use or tool_result blocks must define tools" : undefined;
}

/** The strict schema of a Messages request body sent upstream. */
export const MessagesRequestContract = v.pipe(
  Body,
  rule(toolsUndefined),
  rule((b) =>
    b.temperature !== undefined && b.top_p !== undefined
      ? "temperature and top_p cannot both be set"
      : undefined,
  ),
  rule(thinkingRules),
  rule(toolPairing),
  rule(thinkingInToolLoop),
);

/** Which thinking form a model takes: only adaptive, or only a budget. */
export type ThinkingForm = "adaptive" | "budget";

/** Problems with the thinking form for a model that takes only `form`. */
export function thinkingFormProblem(body: unknown, form: ThinkingForm): string | undefined {
  const thinking = v.safeParse(v.looseObject({ thinking: v.optional(ThinkingConfig) }), body);
  const type = thinking.success ? thinking.output.thinking?.type : undefined;
  if (form === "adaptive" && type === "enabled") return "this model takes only thinking: {type: adaptive}";
  if (form === "budget" && type === "adaptive")
    return "this model takes only thinking: {type: enabled, budget_tokens}";
  return undefined;
}
