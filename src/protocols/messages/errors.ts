// The error answer of the Anthropic Messages API: `{"type": "error", "error": {"type", "message"}}`.
import * as v from "valibot";

const AnthropicError = v.looseObject({
  type: v.optional(v.literal("error")),
  error: v.looseObject({ type: v.optional(v.string()), message: v.string() }),
});

/** The message of a Messages error body; undefined when the body is not one. */
export function messagesErrorMessage(body: unknown): string | undefined {
  const parsed = v.safeParse(AnthropicError, body);
  return parsed.success ? parsed.output.error.message : undefined;
}
