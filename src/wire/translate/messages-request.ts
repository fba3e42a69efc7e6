// Messages requests ↔ the internal form: the head every request gets at once (viewOfMessages) and
// the full form built when a channel speaks another protocol. Reading keeps system (string or blocks), text, images,
// tool_use / tool_result, thinking blocks with signatures, redacted thinking, custom tools,
// tool_choice, thinking (enabled budget or adaptive) with output_config.effort, output_config.format,
// max_tokens, sampling and stop_sequences.
// Drop rules (docs/api.md, "Translation"): toward another protocol, `metadata`, `context_management`,
// `top_k`, `service_tier`, `container`, `mcp_servers`, cache_control marks (OpenAI caches prefixes
// by itself), documents and server tools (tools with a `type` other than `custom`) are dropped.
// Toward a Messages upstream the body follows what the live API accepts:
// - thinking without a signature is dropped (the API refuses it); mid-conversation system
//   messages join the top-level `system`;
// - sampling: dropped while thinking is on (the API requires the defaults then) and for models
//   that refuse it; otherwise temperature wins over top_p (current models take only one);
// - thinking in the model's form (catalog `thinking`: adaptive with effort, or a budget), and off
//   when tool_choice forces a tool (the forced choice is the client's explicit instruction, so it
//   wins) or when the assistant turn a tool result answers has no thinking block to send back;
// - `json_object` without tools of the client's becomes a forced tool whose input is the answer
//   (json-answer.ts; thinking is then off, as for any forced tool); with the client's tools, an
//   instruction in `system` to answer with one JSON object (no schema: `{"type":"object"}` is
//   refused, and closed with additionalProperties:false it would allow only `{}`); a json_schema
//   whose objects cannot be closed without changing its meaning (objects open to any key) becomes
//   an instruction with the schema quoted;
// - an OpenAI `prompt_cache_key` becomes a cache breakpoint on the system prompt.
import { findModel } from "../../catalog/models.ts";
import type { CountTokensRequest, MessagesRequest } from "../messages.ts";
import type {
  IrFormat,
  IrMessage,
  IrPart,
  IrReasoning,
  IrRequest,
  IrTool,
  IrToolChoice,
  TextView,
} from "../text-form.ts";
import { jsonAnswerFields } from "./json-answer.ts";
import { anthropicSchema } from "./json-schema.ts";
import { appendParts, contentParts, dataUrl, textOf } from "./messages-ir.ts";
import { sampling, thinkingBarred, thinkingFields } from "./messages-thinking.ts";
import { argumentsObject, argumentsText, arr, type Obj, obj, str } from "./narrow.ts";
import { contentText, joinText, toolsText } from "./prompt-text.ts";
import { openReasoning } from "./reasoning-seal.ts";

/** A Messages request, or a count_tokens one (without max_tokens and stream). */
type AnyMessagesRequest = CountTokensRequest & Partial<Pick<MessagesRequest, "max_tokens" | "stream">>;

function blockParts(block: Obj): IrPart[] {
  switch (block.type) {
    case "thinking":
      return [{ type: "thinking", text: str(block.thinking) ?? "", signature: str(block.signature) }];
    case "redacted_thinking":
      return [{ type: "redacted_thinking", data: str(block.data) ?? "" }];
    case "tool_use":
      return [
        {
          type: "tool_call",
          id: String(block.id),
          name: String(block.name),
          arguments: argumentsText(block.input),
        },
      ];
    case "tool_result": {
      const content = typeof block.content === "string" ? block.content : contentParts(block.content);
      return [
        { type: "tool_result", callId: String(block.tool_use_id), content, isError: block.is_error === true },
      ];
    }
    default:
      return contentParts([block]);
  }
}

function toolsOf(tools: AnyMessagesRequest["tools"]): IrTool[] {
  return (tools ?? [])
    .filter((t) => t.type === undefined || t.type === "custom")
    .map((t) => ({
      name: t.name,
      description: t.description,
      parameters: t.input_schema,
      strict: undefined,
    }));
}

function toolChoiceOf(choice: AnyMessagesRequest["tool_choice"]): IrToolChoice {
  if (choice?.type === "none") return { mode: "none" };
  if (choice?.type === "any") return { mode: "required" };
  if (choice?.type === "tool" && choice.name) return { mode: "named", name: choice.name };
  return { mode: "auto" };
}

function reasoningOf(request: AnyMessagesRequest): IrReasoning | undefined {
  const thinking = request.thinking;
  const effort = request.output_config?.effort;
  if (thinking?.type === "disabled") return undefined;
  if (thinking === undefined && effort === undefined) return undefined;
  const budget = thinking?.type === "enabled" ? (thinking.budget_tokens as number) : undefined;
  const summary = thinking !== undefined && obj(thinking).display !== "omitted";
  return { effort: effort ?? (budget === undefined ? "medium" : undefined), budgetTokens: budget, summary };
}

function formatOf(request: AnyMessagesRequest): IrFormat | undefined {
  const format = request.output_config?.format;
  return format
    ? { kind: "json_schema", name: "output", schema: format.schema, strict: undefined }
    : undefined;
}

/** The text of the tool results a (last) message carries; undefined when it carries none. */
function toolResultOf(message: AnyMessagesRequest["messages"][number] | undefined): string | undefined {
  if (!Array.isArray(message?.content)) return undefined;
  const results = message.content.filter((b) => b.type === "tool_result");
  return results.length === 0 ? undefined : joinText(results.map((b) => contentText(b.content)));
}

/** The head of a Messages request (count_tokens requests have no max_tokens). */
export function viewOfMessages(request: AnyMessagesRequest): TextView {
  const tools = toolsOf(request.tools);
  const texts = request.messages.map((m) => contentText(m.content));
  const lastUser = request.messages.findLastIndex((m) => m.role === "user");
  const thinking = request.thinking;
  return {
    protocol: "messages",
    model: request.model,
    stream: request.stream === true,
    promptText: joinText([contentText(request.system), ...texts, toolsText(tools)]),
    lastUserText: lastUser >= 0 ? (texts[lastUser] ?? "") : "",
    toolResult: toolResultOf(request.messages.at(-1)),
    tools,
    toolChoice: toolChoiceOf(request.tool_choice),
    outputFormat: formatOf(request),
    maxOutputTokens: request.max_tokens,
    // The model thinks only with thinking on; an effort alone shapes the answer, not a thinking block.
    reasoning: thinking === undefined || thinking.type === "disabled" ? undefined : reasoningOf(request),
    includeUsage: true,
  };
}

/** The internal form of a Messages request. */
export function readMessagesRequest(request: AnyMessagesRequest): IrRequest {
  const system = typeof request.system === "string" ? [request.system] : [];
  if (Array.isArray(request.system)) system.push(textOf(contentParts(request.system)));
  const messages: IrMessage[] = [];
  for (const m of request.messages) {
    const parts =
      typeof m.content === "string" ? contentParts(m.content) : m.content.flatMap((b) => blockParts(obj(b)));
    appendParts(messages, m.role, parts);
  }
  const parallel = obj(request.tool_choice).disable_parallel_tool_use;
  const stop = arr(request.stop_sequences).filter((s): s is string => typeof s === "string");
  return {
    model: request.model,
    system: system.filter((s) => s !== ""),
    messages,
    tools: toolsOf(request.tools),
    toolChoice: toolChoiceOf(request.tool_choice),
    parallelToolCalls: typeof parallel === "boolean" ? !parallel : undefined,
    format: formatOf(request),
    maxTokens: request.max_tokens,
    temperature: typeof request.temperature === "number" ? request.temperature : undefined,
    topP: typeof request.top_p === "number" ? request.top_p : undefined,
    stop,
    reasoning: reasoningOf(request),
    promptCacheKey: undefined,
    stream: request.stream === true,
  };
}

function blockOut(p: IrPart): Obj | undefined {
  switch (p.type) {
    case "text":
      return p.text === "" ? undefined : { type: "text", text: p.text };
    case "image": {
      const inline = dataUrl(p.url);
      return inline
        ? { type: "image", source: { type: "base64", media_type: inline.mediaType, data: inline.data } }
        : { type: "image", source: { type: "url", url: p.url } };
    }
    // A sealed OpenAI reasoning item is no Anthropic signature: the API would refuse it.
    case "thinking":
      return p.signature && !openReasoning(p.signature)
        ? { type: "thinking", thinking: p.text, signature: p.signature }
        : undefined;
    case "redacted_thinking":
      return openReasoning(p.data) ? undefined : { type: "redacted_thinking", data: p.data };
    case "tool_call":
      return { type: "tool_use", id: p.id, name: p.name, input: argumentsObject(p.arguments) };
    case "tool_result": {
      const content = typeof p.content === "string" ? p.content : p.content.flatMap((c) => blockOut(c) ?? []);
      return {
        type: "tool_result",
        tool_use_id: p.callId,
        content,
        ...(p.isError ? { is_error: true } : {}),
      };
    }
  }
}

function messagesOut(ir: IrRequest, system: string[]): Obj[] {
  const merged: IrMessage[] = [];
  for (const m of ir.messages) {
    if (m.role === "system") system.push(textOf(m.parts));
    else appendParts(merged, m.role, m.parts);
  }
  return merged.flatMap((m) => {
    // Tool results must lead the user message that answers a tool_use.
    const ordered = m.role === "user" ? [...m.parts].sort((a, b) => rank(a) - rank(b)) : m.parts;
    const content = ordered.flatMap((p) => blockOut(p) ?? []);
    return content.length === 0 ? [] : [{ role: m.role, content }];
  });
}

function rank(p: IrPart): number {
  return p.type === "tool_result" ? 0 : 1;
}

/** What a format becomes: structured output, or an instruction added to `system`. */
function formatFields(f: IrFormat): { schema: Obj | undefined; instruction: string | undefined } {
  if (f.kind === "json_object")
    return { schema: undefined, instruction: "Answer with a single JSON object and nothing else." };
  const schema = anthropicSchema(f.schema);
  if (schema !== undefined) return { schema, instruction: undefined };
  return {
    schema: undefined,
    instruction: `Answer with a single JSON value that matches this JSON Schema, and nothing else:\n${JSON.stringify(f.schema)}`,
  };
}

/** `system` as a string, or as one text block with a cache breakpoint when the client gave a cache key. */
function systemField(system: string[], cacheKey: string | undefined): string | Obj[] {
  const text = system.join("\n\n");
  return cacheKey === undefined ? text : [{ type: "text", text, cache_control: { type: "ephemeral" } }];
}

/** Tool input schemas are objects: a schema without a type (Chat's `{}`) is given `type: "object"`. */
function inputSchema(parameters: IrTool["parameters"]): Obj {
  if (parameters === undefined) return { type: "object", properties: {} };
  return parameters.type === undefined ? { type: "object", ...parameters } : { ...parameters };
}

/**
 * `tools` and `tool_choice`. The API refuses tool_use and tool_result blocks in a request that
 * defines no tools, and OpenAI clients may send a tool-call history without tools: those tools
 * are declared by name with any input, and tool_choice `none` keeps the model from calling them.
 */
function toolFields(ir: IrRequest): Obj {
  if (ir.tools.length === 0) {
    const used = new Set(
      ir.messages.flatMap((m) => m.parts.flatMap((p) => (p.type === "tool_call" ? [p.name] : []))),
    );
    if (used.size === 0) return {};
    const tools = [...used].map((name) => ({ name, input_schema: { type: "object" } }));
    return { tools, tool_choice: { type: "none" } };
  }
  const tools = ir.tools.map((t) => ({
    name: t.name,
    ...(t.description === undefined ? {} : { description: t.description }),
    input_schema: inputSchema(t.parameters),
  }));
  const c = ir.toolChoice;
  const choice: Obj =
    c.mode === "named" ? { type: "tool", name: c.name } : { type: c.mode === "required" ? "any" : c.mode };
  if (ir.parallelToolCalls === false && c.mode !== "none") choice.disable_parallel_tool_use = true;
  return { tools, tool_choice: choice };
}

/** A Messages request body for the internal form; `defaultMaxTokens` fills the required max_tokens. */
export function writeMessagesRequest(ir: IrRequest, model: string, defaultMaxTokens: number): Obj {
  const form = findModel(ir.model)?.thinking ?? { form: "budget", efforts: [], sampling: true };
  const system = [...ir.system];
  const messages = messagesOut(ir, system);
  const maxTokens = ir.maxTokens ?? defaultMaxTokens;
  const body: Obj = { model, max_tokens: maxTokens, messages, stream: ir.stream };
  const tools = toolFields(ir);
  const jsonAnswer = ir.format?.kind === "json_object" && tools.tools === undefined;
  Object.assign(body, jsonAnswer ? jsonAnswerFields() : tools);
  const output: Obj = {};
  if (ir.format !== undefined && !jsonAnswer) {
    const { schema, instruction } = formatFields(ir.format);
    if (schema !== undefined) output.format = { type: "json_schema", schema };
    if (instruction !== undefined) system.push(instruction);
  }
  if (system.length > 0) body.system = systemField(system, ir.promptCacheKey);
  if (ir.stop.length > 0) body.stop_sequences = ir.stop;
  const thinking =
    ir.reasoning === undefined || jsonAnswer || thinkingBarred(ir, messages)
      ? {}
      : thinkingFields(ir.reasoning, maxTokens, form);
  if (thinking.thinking !== undefined) body.thinking = thinking.thinking;
  else Object.assign(body, sampling(ir, form));
  if (thinking.effort !== undefined) output.effort = thinking.effort;
  if (Object.keys(output).length > 0) body.output_config = output;
  return body;
}
