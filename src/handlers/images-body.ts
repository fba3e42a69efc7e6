// Reading the JSON body of an image generation: capped while it streams in (413 past the cap),
// parsed once.
import { GatewayError } from "../wire/errors.ts";

/** A generation body is a prompt of at most 32000 characters plus a few fields: 1 MiB is ample. */
export const MAX_JSON_BYTES = 1024 * 1024;

export async function readJsonBody(request: Request, cap = MAX_JSON_BYTES): Promise<unknown> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  if (request.body) {
    const reader = request.body.getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > cap) {
        await reader.cancel();
        throw new GatewayError("too_large", `request body is larger than ${cap} bytes; shorten the prompt`);
      }
      chunks.push(value);
    }
  }
  const text = Buffer.concat(chunks).toString("utf8");
  if (text.trim() === "") {
    throw new GatewayError(
      "invalid_request",
      "request body is empty; send a JSON object with model and prompt",
    );
  }
  try {
    return JSON.parse(text);
  } catch (thrown) {
    const reason = thrown instanceof Error ? thrown.message : String(thrown);
    throw new GatewayError(
      "invalid_request",
      `request body is not valid JSON (${reason}); send a JSON object`,
    );
  }
}
