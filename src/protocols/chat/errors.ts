// The error answer of a Chat Completions server: OpenAI's shape, or one of the forms
// OpenAI-compatible servers use instead (`{"error": "text"}`, vLLM's `{"object": "error",
// "message"}`, a bare `{"message"}`).
import * as v from "valibot";
import { openaiErrorMessage } from "../responses/errors.ts";

const CompatibleError = v.union([
  v.looseObject({ error: v.string() }),
  v.looseObject({ message: v.string() }),
]);

/** The message of a Chat server's error body; undefined when the body is none of the known forms. */
export function chatErrorMessage(body: unknown): string | undefined {
  const openai = openaiErrorMessage(body);
  if (openai !== undefined) return openai;
  const parsed = v.safeParse(CompatibleError, body);
  if (!parsed.success) return undefined;
  const { error, message } = parsed.output;
  return typeof error === "string" ? error : typeof message === "string" ? message : undefined;
}
