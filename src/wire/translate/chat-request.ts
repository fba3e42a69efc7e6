// Chat Completions requests ↔ the internal form: the head every request gets at once (viewOfChat)
// and the full form built when a channel speaks another protocol. Reading keeps system/developer messages, user
// text and images, assistant text and tool_calls, tool messages, function tools, tool_choice,
// response_format, max_completion_tokens / max_tokens, reasoning_effort, stop.
// Drop rules (docs/api.md, "Translation"): thinking blocks and reasoning items have no place in a Chat
// request and are dropped when the upstream speaks Chat (their signatures cannot be sent back);
// audio, files, `n`, `logprobs`, `seed`, penalties are not forwarded to other protocols.
// A refusal in an assistant message is history text (the internal form has no refusal in
// requests). Writing follows the published schema: tool messages carry text only (images of a
// tool result follow in a user message), an assistant message without text or tool calls is not
// sent, `strict` only when the client asked for it or the schema qualifies.
import type { ChatRequest } from "../chat.ts";
import type { IrFormat, IrMessage, IrPart, IrRequest, IrTool, TextView } from "../text-form.ts";
import { appendParts, contentAsText, contentParts, textOf } from "./messages-ir.ts";
import { arr, type Obj, obj, str } from "./narrow.ts";
import { contentText, joinText, toolsText } from "./prompt-text.ts";
import {
  effortForBudget,
  openaiEffort,
  openaiRequestFields,
  strictFor,
  toolChoiceOf,
} from "./responses-request.ts";

function formatOf(format: ChatRequest["response_format"]): IrFormat | undefined {
  if (format?.type === "json_schema" && format.json_schema?.schema) {
    const strict = obj(format.json_schema).strict;
    return {
      kind: "json_schema",
      name: format.json_schema.name,
      schema: format.json_schema.schema,
      strict: typeof strict === "boolean" ? strict : undefined,
    };
  }
  return format?.type === "json_object" ? { kind: "json_object" } : undefined;
}

function stopOf(stop: unknown): string[] {
  if (typeof stop === "string") return [stop];
  return Array.isArray(stop) ? stop.filter((s): s is string => typeof s === "string") : [];
}

function readMessage(messages: IrMessage[], system: string[], m: ChatRequest["messages"][number]): void {
  if (m.role === "system" || m.role === "developer") {
    const parts = contentParts(m.content);
    if (messages.length === 0) system.push(textOf(parts));
    else appendParts(messages, "system", parts);
  } else if (m.role === "user") appendParts(messages, "user", contentParts(m.content));
  else if (m.role === "tool") {
    const content = typeof m.content === "string" ? m.content : contentParts(m.content);
    appendParts(messages, "user", [{ type: "tool_result", callId: m.tool_call_id, content, isError: false }]);
  } else {
    const calls: IrPart[] = arr(obj(m).tool_calls).map((raw) => {
      const fn = obj(obj(raw).function);
      return {
        type: "tool_call",
        id: String(obj(raw).id),
        name: String(fn.name),
        arguments: String(fn.arguments),
      };
    });
    const refusal = str(obj(m).refusal);
    const said = contentParts(obj(m).content ?? "");
    if (refusal && said.length === 0) said.push({ type: "text", text: refusal });
    appendParts(messages, "assistant", [...said, ...calls]);
  }
}

function toolsOf(tools: ChatRequest["tools"]): IrTool[] {
  return (tools ?? []).map((t) => ({
    name: t.function.name,
    description: t.function.description ?? undefined,
    parameters: t.function.parameters ?? undefined,
    strict: typeof t.function.strict === "boolean" ? t.function.strict : undefined,
  }));
}

function reasoningOf(request: ChatRequest): IrRequest["reasoning"] {
  const effort = request.reasoning_effort ?? undefined;
  return effort === undefined || effort === "none"
    ? undefined
    : { effort, budgetTokens: undefined, summary: false };
}

function messageText(message: ChatRequest["messages"][number]): string {
  const text = contentText(message.content);
  // Only an assistant message with tool calls has more to join: no lists made for the others.
  const calls = message.role === "assistant" ? message.tool_calls : undefined;
  if (!calls?.length) return text;
  return joinText([text, ...calls.map((c) => joinText([c.function.name, c.function.arguments]))]);
}

/** The head of a Chat Completions request (sizing, routing, the simulator). */
export function viewOfChat(request: ChatRequest): TextView {
  const tools = toolsOf(request.tools);
  const texts = request.messages.map(messageText);
  const lastUserIndex = request.messages.findLastIndex((m) => m.role === "user");
  return {
    protocol: "chat",
    model: request.model,
    stream: request.stream === true,
    promptText: tools.length === 0 ? joinText(texts) : joinText([...texts, toolsText(tools)]),
    lastUserText: lastUserIndex >= 0 ? (texts[lastUserIndex] ?? "") : "",
    toolResult: request.messages.at(-1)?.role === "tool" ? (texts.at(-1) ?? "") : undefined,
    tools,
    toolChoice: toolChoiceOf(request.tool_choice),
    outputFormat: formatOf(request.response_format),
    maxOutputTokens: request.max_completion_tokens ?? request.max_tokens ?? undefined,
    reasoning: reasoningOf(request),
    includeUsage: request.stream_options?.include_usage === true,
  };
}

/** The internal form of a Chat Completions request. */
export function readChatRequest(request: ChatRequest): IrRequest {
  const system: string[] = [];
  const messages: IrMessage[] = [];
  for (const m of request.messages) readMessage(messages, system, m);
  return {
    ...openaiRequestFields(request),
    system,
    messages,
    tools: toolsOf(request.tools),
    format: formatOf(request.response_format),
    maxTokens: request.max_completion_tokens ?? request.max_tokens ?? undefined,
    stop: stopOf(request.stop),
    reasoning: reasoningOf(request),
  };
}

function userContent(parts: IrPart[]): string | Obj[] {
  if (parts.every((p) => p.type === "text")) return textOf(parts);
  return parts.flatMap((p): Obj[] => {
    if (p.type === "text") return [{ type: "text", text: p.text }];
    if (p.type === "image") return [{ type: "image_url", image_url: { url: p.url } }];
    return [];
  });
}

function writeMessage(m: IrMessage): Obj[] {
  if (m.role === "system") return [{ role: "system", content: textOf(m.parts) }];
  if (m.role === "assistant") {
    const calls = m.parts.flatMap((p) =>
      p.type === "tool_call"
        ? [{ id: p.id, type: "function", function: { name: p.name, arguments: p.arguments } }]
        : [],
    );
    const text = textOf(m.parts);
    // Thinking-only turns have nothing Chat can carry; the API refuses an empty assistant message.
    if (text === "" && calls.length === 0) return [];
    return [
      {
        role: "assistant",
        content: text === "" ? null : text,
        ...(calls.length > 0 ? { tool_calls: calls } : {}),
      },
    ];
  }
  const out: Obj[] = [];
  const toolImages: IrPart[] = [];
  for (const p of m.parts) {
    if (p.type !== "tool_result") continue;
    const parts = typeof p.content === "string" ? [] : p.content;
    toolImages.push(...parts.filter((c) => c.type === "image"));
    out.push({ role: "tool", tool_call_id: p.callId, content: contentAsText(p.content) });
  }
  // Tool messages take text only: a tool result's images follow in a user message.
  const rest = [...toolImages, ...m.parts.filter((p) => p.type === "text" || p.type === "image")];
  if (rest.length > 0) out.push({ role: "user", content: userContent(rest) });
  return out;
}

/** A Chat Completions request body for the internal form. */
export function writeChatRequest(ir: IrRequest, model: string): Obj {
  const messages: Obj[] = ir.system.length > 0 ? [{ role: "system", content: ir.system.join("\n\n") }] : [];
  messages.push(...ir.messages.flatMap(writeMessage));
  const body: Obj = { model, messages, stream: ir.stream };
  if (ir.stream) body.stream_options = { include_usage: true };
  if (ir.tools.length > 0) {
    body.tools = ir.tools.map((t) => ({
      type: "function",
      function: {
        name: t.name,
        ...(t.description === undefined ? {} : { description: t.description }),
        parameters: t.parameters ?? { type: "object", properties: {} },
        ...(t.strict === undefined ? {} : { strict: t.strict }),
      },
    }));
    const c = ir.toolChoice;
    body.tool_choice = c.mode === "named" ? { type: "function", function: { name: c.name } } : c.mode;
  }
  if (ir.parallelToolCalls !== undefined && ir.tools.length > 0)
    body.parallel_tool_calls = ir.parallelToolCalls;
  const f = ir.format;
  if (f?.kind === "json_schema") {
    const strict = strictFor(f.strict, f.schema);
    body.response_format = {
      type: "json_schema",
      json_schema: { name: f.name, schema: f.schema, ...(strict === undefined ? {} : { strict }) },
    };
  } else if (f?.kind === "json_object") body.response_format = { type: "json_object" };
  if (ir.promptCacheKey !== undefined) body.prompt_cache_key = ir.promptCacheKey;
  if (ir.maxTokens !== undefined) body.max_completion_tokens = ir.maxTokens;
  if (ir.temperature !== undefined) body.temperature = ir.temperature;
  if (ir.topP !== undefined) body.top_p = ir.topP;
  if (ir.stop.length > 0) body.stop = ir.stop.slice(0, 4);
  const r = ir.reasoning;
  if (r !== undefined)
    body.reasoning_effort = openaiEffort(r.effort ?? effortForBudget(r.budgetTokens ?? 8192));
  return body;
}
