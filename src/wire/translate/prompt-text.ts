// The prompt text of a request's head (TextView.promptText): every piece of text the model would
// read, joined the same way for all three protocols, so sizing and the simulator count alike.
import type { IrTool } from "../text-form.ts";
/**
 * Joins text fragments into one prompt text, skipping empty ones. Built in place (no filtered
 * copy of the list): it runs for every message of every request, and a lone fragment is returned
 * as it is.
 */
export function joinText(parts: readonly (string | undefined)[]): string {
  let text = "";
  for (const part of parts) {
    if (part === undefined || part === "") continue;
    text = text === "" ? part : `${text}\n${part}`;
  }
  return text;
}

/** The fields of a content part that hold text the model reads. */
const TEXT_FIELDS = ["text", "thinking", "refusal"] as const;

/** The text inside a content value that is a string or an array of parts with `text` fields. */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  const out: string[] = [];
  for (const part of content) {
    if (typeof part !== "object" || part === null) continue;
    const record = part as Record<string, unknown>;
    for (const field of TEXT_FIELDS) {
      const value = record[field];
      if (typeof value === "string") out.push(value);
    }
    if (record.content !== undefined) out.push(contentText(record.content));
    if (record.input !== undefined) out.push(JSON.stringify(record.input));
  }
  return joinText(out);
}

/** Text of tool definitions: names, descriptions and schemas count as prompt. */
export function toolsText(tools: readonly Pick<IrTool, "name" | "description" | "parameters">[]): string {
  if (tools.length === 0) return "";
  return joinText(
    tools.map((t) =>
      joinText([
        t.name,
        t.description,
        t.parameters === undefined ? undefined : JSON.stringify(t.parameters),
      ]),
    ),
  );
}
