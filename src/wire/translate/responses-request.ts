// Responses requests ↔ the internal form: the head every request gets at once (viewOfResponses)
// and the full form built when a channel speaks another protocol. Reading keeps instructions, message items (text and
// images), function calls and their outputs, reasoning items (summary text + encrypted_content as
// the signature), function tools, tool_choice, text.format / response_format, reasoning effort.
// Drop rules (documented in docs/api.md, "Translation"): tools other than `function` (custom, namespace,
// web_search, local_shell, …) and items other than messages, function calls/outputs and
// reasoning are dropped when the upstream speaks another protocol; `include`, `store`,
// `client_metadata`, `service_tier`, `text.verbosity` are not forwarded there; `prompt_cache_key`
// goes to Chat as it is, and to Messages as a cache breakpoint on the system prompt.
// Writing follows the published schema, not the live API's tolerance: assistant text as string
// content, reasoning items only with their id, max_output_tokens at least 16, `strict` only when
// the client asked for it or the schema qualifies.
import type { ChatRequest } from "../chat.ts";
import type { ResponsesRequest } from "../responses.ts";
import type { IrFormat, IrMessage, IrPart, IrRequest, IrTool, IrToolChoice, TextView } from "../text-form.ts";
import { isStrictCompatible } from "./json-schema.ts";
import { appendParts, contentParts, textOf } from "./messages-ir.ts";
import { arr, type Obj, obj, str } from "./narrow.ts";
import { contentText, joinText, toolsText } from "./prompt-text.ts";
import { openReasoning, openRedacted } from "./reasoning-seal.ts";

function toolsOf(tools: ResponsesRequest["tools"]): IrTool[] {
  const out: IrTool[] = [];
  for (const raw of tools ?? []) {
    const tool = obj(raw);
    if (tool.type !== "function") continue;
    const fn = tool.function === undefined ? tool : obj(tool.function);
    const name = str(fn.name);
    if (name === undefined) continue;
    out.push({
      name,
      description: str(fn.description),
      parameters: fn.parameters === null || fn.parameters === undefined ? undefined : obj(fn.parameters),
      strict: typeof fn.strict === "boolean" ? fn.strict : undefined,
    });
  }
  return out;
}

export function toolChoiceOf(choice: unknown): IrToolChoice {
  if (choice === "none" || choice === "required") return { mode: choice };
  const c = obj(choice);
  const name = str(c.name) ?? str(obj(c.function).name);
  if (c.type === "function" && name) return { mode: "named", name };
  return { mode: "auto" };
}

function formatOf(request: ResponsesRequest): IrFormat | undefined {
  const format = obj(request.text?.format ?? undefined);
  if (format.type === "json_schema" && format.schema !== undefined) {
    const strict = typeof format.strict === "boolean" ? format.strict : undefined;
    return { kind: "json_schema", name: str(format.name) ?? "output", schema: obj(format.schema), strict };
  }
  if (format.type === "json_object") return { kind: "json_object" };
  const legacy = request.response_format;
  if (legacy?.type === "json_schema" && legacy.json_schema?.schema) {
    return {
      kind: "json_schema",
      name: legacy.json_schema.name,
      schema: legacy.json_schema.schema,
      strict: undefined,
    };
  }
  return legacy?.type === "json_object" ? { kind: "json_object" } : undefined;
}

function reasoningPart(item: Obj): IrPart {
  const redacted = openRedacted(str(item.encrypted_content));
  if (redacted !== undefined) return { type: "redacted_thinking", data: redacted };
  const summary = arr(item.summary).map((s) => str(obj(s).text) ?? "");
  const content = arr(item.content).map((s) => str(obj(s).text) ?? "");
  const text = (summary.length > 0 ? summary : content).join("\n\n");
  return { type: "thinking", text, signature: str(item.encrypted_content), id: str(item.id) };
}

function readItem(messages: IrMessage[], system: string[], item: Obj): void {
  switch (item.type ?? "message") {
    case "message": {
      const role = item.role === "assistant" ? "assistant" : item.role === "user" ? "user" : "system";
      const parts = contentParts(item.content);
      if (role === "system" && messages.length === 0) {
        system.push(...parts.flatMap((p) => (p.type === "text" ? [p.text] : [])));
      } else appendParts(messages, role, parts);
      return;
    }
    case "function_call":
      appendParts(messages, "assistant", [
        {
          type: "tool_call",
          id: String(item.call_id),
          name: String(item.name),
          arguments: String(item.arguments),
        },
      ]);
      return;
    case "function_call_output": {
      const output = typeof item.output === "string" ? item.output : contentParts(item.output);
      appendParts(messages, "user", [
        { type: "tool_result", callId: String(item.call_id), content: output, isError: false },
      ]);
      return;
    }
    case "reasoning":
      appendParts(messages, "assistant", [reasoningPart(item)]);
      return;
  }
}

function reasoningOf(request: ResponsesRequest): IrRequest["reasoning"] {
  const effort = request.reasoning?.effort ?? undefined;
  return effort === undefined || effort === "none"
    ? undefined
    : { effort, budgetTokens: undefined, summary: Boolean(request.reasoning?.summary) };
}

interface Turns {
  text: string[];
  lastUser: string;
  toolResult: string | undefined;
}

function turnsOf(input: ResponsesRequest["input"]): Turns {
  if (typeof input === "string") return { text: [input], lastUser: input, toolResult: undefined };
  const turns: Turns = { text: [], lastUser: "", toolResult: undefined };
  for (const item of input) {
    const record = item as Record<string, unknown>;
    let text = "";
    if (record.type === "function_call") text = joinText([String(record.name), String(record.arguments)]);
    else if (record.type === "function_call_output" || "content" in record) {
      text = contentText(record.type === "function_call_output" ? record.output : record.content);
    } else text = contentText(record.summary);
    turns.text.push(text);
    if (record.role === "user") turns.lastUser = text;
    turns.toolResult = record.type === "function_call_output" ? text : undefined;
  }
  return turns;
}

/** The head of a Responses request (sizing, routing, the simulator). */
export function viewOfResponses(request: ResponsesRequest): TextView {
  const tools = toolsOf(request.tools);
  const turns = turnsOf(request.input);
  return {
    protocol: "responses",
    model: request.model,
    stream: request.stream === true,
    promptText: joinText([request.instructions ?? undefined, ...turns.text, toolsText(tools)]),
    lastUserText: turns.lastUser,
    toolResult: turns.toolResult,
    tools,
    toolChoice: toolChoiceOf(request.tool_choice),
    outputFormat: formatOf(request),
    maxOutputTokens: request.max_output_tokens ?? undefined,
    reasoning: reasoningOf(request),
    includeUsage: true,
  };
}

/** The internal form of a Responses request (after previous_response_id was expanded, if any). */
export function readResponsesRequest(request: ResponsesRequest): IrRequest {
  const system: string[] = request.instructions ? [request.instructions] : [];
  const messages: IrMessage[] = [];
  if (typeof request.input === "string") appendParts(messages, "user", contentParts(request.input));
  else for (const item of request.input) readItem(messages, system, obj(item));
  return {
    ...openaiRequestFields(request),
    system,
    messages,
    tools: toolsOf(request.tools),
    format: formatOf(request),
    maxTokens: request.max_output_tokens ?? undefined,
    stop: [],
    reasoning: reasoningOf(request),
  };
}

/** The internal fields both OpenAI protocols (Chat and Responses) send under the same names. */
export function openaiRequestFields(
  request: ChatRequest | ResponsesRequest,
): Pick<
  IrRequest,
  "model" | "toolChoice" | "parallelToolCalls" | "temperature" | "topP" | "promptCacheKey" | "stream"
> {
  return {
    model: request.model,
    toolChoice: toolChoiceOf(request.tool_choice),
    parallelToolCalls:
      typeof request.parallel_tool_calls === "boolean" ? request.parallel_tool_calls : undefined,
    temperature: request.temperature ?? undefined,
    topP: request.top_p ?? undefined,
    promptCacheKey: str(obj(request).prompt_cache_key),
    stream: request.stream === true,
  };
}

function contentOut(parts: IrPart[], role: "user" | "assistant"): Obj[] {
  const out: Obj[] = [];
  for (const p of parts) {
    if (p.type === "text")
      out.push({ type: role === "assistant" ? "output_text" : "input_text", text: p.text });
    else if (p.type === "image" && role === "user")
      out.push({ type: "input_image", image_url: p.url, detail: "auto" });
  }
  return out;
}

/**
 * A reasoning item for a thinking part: the schema requires the item's id. Thinking read from a
 * Responses client's reasoning item has it; thinking (or redacted thinking) that a Messages client
 * sends back carries it in its sealed signature. Other thinking (Anthropic signatures, which an
 * OpenAI upstream cannot read anyway) is not sent.
 */
function reasoningItem(p: IrPart): Obj | undefined {
  if (p.type !== "thinking" && p.type !== "redacted_thinking") return undefined;
  const sealed = openReasoning(p.type === "thinking" ? p.signature : p.data);
  const id = sealed?.id ?? (p.type === "thinking" ? p.id : undefined);
  if (id === undefined) return undefined;
  const encrypted = sealed?.encrypted ?? (p.type === "thinking" ? p.signature : undefined);
  const summary = p.type === "thinking" && p.text !== "" ? [{ type: "summary_text", text: p.text }] : [];
  return { type: "reasoning", id, summary, ...(encrypted ? { encrypted_content: encrypted } : {}) };
}

function itemsOf(message: IrMessage): Obj[] {
  const items: Obj[] = [];
  const role = message.role === "system" ? "developer" : message.role;
  let pending: IrPart[] = [];
  const flush = () => {
    // Assistant history goes as string content: the schema takes assistant text only that way
    // or as an output message item (which needs an id the gateway does not have).
    if (role === "assistant") {
      const text = textOf(pending);
      if (text !== "") items.push({ role, content: text });
    } else {
      const content = contentOut(pending, "user");
      if (content.length > 0) items.push({ type: "message", role, content });
    }
    pending = [];
  };
  for (const p of message.parts) {
    if (p.type === "text" || p.type === "image") {
      pending.push(p);
      continue;
    }
    flush();
    if (p.type === "tool_call")
      items.push({ type: "function_call", call_id: p.id, name: p.name, arguments: p.arguments });
    else if (p.type === "tool_result") {
      const output = typeof p.content === "string" ? p.content : contentOut(p.content, "user");
      items.push({ type: "function_call_output", call_id: p.callId, output });
    } else {
      const reasoning = reasoningItem(p);
      if (reasoning !== undefined) items.push(reasoning);
    }
  }
  flush();
  return items;
}

/** OpenAI's effort values; Anthropic's `max` is sent as the highest OpenAI one. */
export function openaiEffort(effort: string): string {
  return effort === "max" ? "xhigh" : effort;
}

/** The Responses API refuses max_output_tokens below 16 (admission reserves for that many too). */
export const MIN_OUTPUT_TOKENS = 16;

/** `strict` for a schema: the client's choice, else true when the schema qualifies (meaning unchanged). */
export function strictFor(asked: boolean | undefined, schema: unknown): boolean | undefined {
  if (asked !== undefined) return asked;
  return isStrictCompatible(schema) ? true : undefined;
}

/** Effort for a thinking budget (the inverse of the Messages writer's budgets). */
export function effortForBudget(budget: number): string {
  if (budget <= 2048) return "low";
  if (budget <= 8192) return "medium";
  if (budget <= 24576) return "high";
  return "xhigh";
}

/** A Responses request body for the internal form. */
export function writeResponsesRequest(ir: IrRequest, model: string): Obj {
  const body: Obj = {
    model,
    input: ir.messages.flatMap(itemsOf),
    stream: ir.stream,
    store: false,
  };
  if (ir.system.length > 0) body.instructions = ir.system.join("\n\n");
  if (ir.tools.length > 0) {
    body.tools = ir.tools.map((t) => ({
      type: "function",
      name: t.name,
      ...(t.description === undefined ? {} : { description: t.description }),
      parameters: t.parameters ?? { type: "object", properties: {} },
      strict: t.strict ?? false,
    }));
    const c = ir.toolChoice;
    body.tool_choice = c.mode === "named" ? { type: "function", name: c.name } : c.mode;
  }
  if (ir.parallelToolCalls !== undefined) body.parallel_tool_calls = ir.parallelToolCalls;
  const f = ir.format;
  if (f?.kind === "json_schema") {
    const strict = strictFor(f.strict, f.schema);
    body.text = {
      format: {
        type: "json_schema",
        name: f.name,
        schema: f.schema,
        ...(strict === undefined ? {} : { strict }),
      },
    };
  } else if (f?.kind === "json_object") body.text = { format: { type: "json_object" } };
  // Raised to the API's minimum: a client's smaller cap (a Messages `max_tokens: 10`) would be
  // refused. The answer may run a few tokens longer than asked; admission reserves for the raised
  // cap (src/pipeline/text.ts) and the answer is billed as the upstream reports it.
  if (ir.maxTokens !== undefined) body.max_output_tokens = Math.max(MIN_OUTPUT_TOKENS, ir.maxTokens);
  if (ir.promptCacheKey !== undefined) body.prompt_cache_key = ir.promptCacheKey;
  if (ir.temperature !== undefined) body.temperature = ir.temperature;
  if (ir.topP !== undefined) body.top_p = ir.topP;
  const r = ir.reasoning;
  if (r !== undefined) {
    const effort = openaiEffort(r.effort ?? effortForBudget(r.budgetTokens ?? 8192));
    body.reasoning = { effort, ...(r.summary ? { summary: "auto" } : {}) };
    body.include = ["reasoning.encrypted_content"];
  }
  return body;
}
