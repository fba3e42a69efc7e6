// Building the internal conversation: parts are appended to the last message when the role is
// the same, so consecutive items of one speaker (reasoning, text, tool calls; several tool
// results) form one message, as the Messages protocol requires.
import type { IrContent, IrMessage, IrPart } from "../text-form.ts";
import { arr, obj, str } from "./narrow.ts";

export function appendParts(messages: IrMessage[], role: IrMessage["role"], parts: IrPart[]): void {
  if (parts.length === 0) return;
  const last = messages.at(-1);
  if (last !== undefined && last.role === role && role !== "system") last.parts.push(...parts);
  else messages.push({ role, parts: [...parts] });
}

/** The text of parts (text parts only), joined with blank lines. */
export function textOf(parts: readonly IrPart[]): string {
  return parts
    .filter((p): p is Extract<IrPart, { type: "text" }> => p.type === "text")
    .map((p) => p.text)
    .join("\n\n");
}

/** Tool result content as plain text (images are dropped where only text fits). */
export function contentAsText(content: IrContent): string {
  return typeof content === "string" ? content : textOf(content);
}

/**
 * Reads a content value of any of the three protocols (a string, or parts such as `text`,
 * `input_text`, `output_text`, `refusal`, `image_url`, `input_image`, `image`) into text and
 * image parts. Unknown part types (files, audio, documents) are dropped.
 */
export function contentParts(content: unknown): IrPart[] {
  if (typeof content === "string") return content === "" ? [] : [{ type: "text", text: content }];
  const parts: IrPart[] = [];
  for (const raw of arr(content)) {
    const part = obj(raw);
    const text = str(part.text) ?? str(part.refusal);
    switch (part.type) {
      case "text":
      case "input_text":
      case "output_text":
      case "refusal":
        if (text !== undefined) parts.push({ type: "text", text });
        break;
      case "image_url": {
        const url = str(obj(part.image_url).url) ?? str(part.image_url);
        if (url) parts.push({ type: "image", url });
        break;
      }
      case "input_image": {
        const url = str(part.image_url) ?? str(obj(part.image_url).url);
        if (url) parts.push({ type: "image", url });
        break;
      }
      case "image": {
        const source = obj(part.source);
        if (source.type === "base64" && str(source.data) !== undefined) {
          parts.push({
            type: "image",
            url: `data:${str(source.media_type) ?? "image/png"};base64,${str(source.data)}`,
          });
        } else if (source.type === "url" && str(source.url))
          parts.push({ type: "image", url: String(source.url) });
        break;
      }
    }
  }
  return parts;
}

/** Splits a data URL into media type and base64 data; undefined for other URLs. */
export function dataUrl(url: string): { mediaType: string; data: string } | undefined {
  const match = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  return match ? { mediaType: match[1] ?? "image/png", data: match[2] ?? "" } : undefined;
}
