// The error answer of an OpenAI API (Responses here, Chat and images alike):
// `{"error": {"message", "type", "param", "code"}}`.
import * as v from "valibot";

const OpenAIError = v.looseObject({ error: v.looseObject({ message: v.string() }) });

/** The message of an OpenAI error body; undefined when the body is not one. */
export function openaiErrorMessage(body: unknown): string | undefined {
  const parsed = v.safeParse(OpenAIError, body);
  return parsed.success ? parsed.output.error.message : undefined;
}
