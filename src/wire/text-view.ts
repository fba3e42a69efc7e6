// The protocol-neutral view of a text request: what the simulator needs to answer it and what the
// gateway needs to size it. Each wire module (responses, chat, messages) converts its request into
// this form; cross-protocol translation will grow from the same place.

/** The three client protocols of the text endpoints. */
export type TextProtocol = "responses" | "chat" | "messages";

/** The endpoint path of each text protocol. */
export const TEXT_PATHS: Readonly<Record<TextProtocol, string>> = {
  responses: "/v1/responses",
  chat: "/v1/chat/completions",
  messages: "/v1/messages",
};

/** A JSON Schema object as sent by clients; only the keywords the simulator reads are typed. */
export type JsonSchema = { readonly [key: string]: unknown };

export interface ToolView {
  name: string;
  /** The tool's JSON Schema for its arguments; undefined when the client gave none. */
  parameters: JsonSchema | undefined;
}

export type ToolChoiceView =
  | { mode: "auto" }
  | { mode: "none" }
  | { mode: "required" }
  | { mode: "named"; name: string };

export type OutputFormatView = { kind: "json_schema"; schema: JsonSchema } | { kind: "json_object" };

export interface ReasoningView {
  /** OpenAI-style effort (`low` … `xhigh`), or undefined when only a thinking budget was given. */
  effort: string | undefined;
  /** Anthropic thinking budget in tokens. */
  budgetTokens: number | undefined;
  /** Whether a readable summary was asked for (Responses `reasoning.summary`). */
  summary: boolean;
}

export interface TextView {
  protocol: TextProtocol;
  model: string;
  stream: boolean;
  /** Every piece of text the model would read (system, messages, tool results, tool definitions). */
  promptText: string;
  /** The text of the last user turn (directives and tool mentions are read from here). */
  lastUserText: string;
  /** True when the conversation ends with a tool result sent back by the client. */
  endsWithToolResult: boolean;
  tools: ToolView[];
  toolChoice: ToolChoiceView;
  outputFormat: OutputFormatView | undefined;
  /** The client's cap on output tokens (reasoning included), if any. */
  maxOutputTokens: number | undefined;
  reasoning: ReasoningView | undefined;
  /** Chat `stream_options.include_usage`. */
  includeUsage: boolean;
}

/** Joins text fragments into one prompt text, skipping empty ones. */
export function joinText(parts: readonly (string | undefined)[]): string {
  return parts.filter((p): p is string => p !== undefined && p !== "").join("\n");
}

/** The text inside a content value that is a string or an array of parts with `text` fields. */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  const out: string[] = [];
  for (const part of content) {
    if (typeof part !== "object" || part === null) continue;
    const record = part as Record<string, unknown>;
    for (const field of ["text", "thinking", "refusal"]) {
      const value = record[field];
      if (typeof value === "string") out.push(value);
    }
    if (record.content !== undefined) out.push(contentText(record.content));
    if (record.input !== undefined) out.push(JSON.stringify(record.input));
  }
  return joinText(out);
}

/** Text of tool definitions: names, descriptions and schemas count as prompt. */
export function toolsText(
  tools: readonly { name: string; description?: string | undefined; schema: unknown }[],
): string {
  return joinText(
    tools.map((t) =>
      joinText([t.name, t.description, t.schema === undefined ? undefined : JSON.stringify(t.schema)]),
    ),
  );
}
