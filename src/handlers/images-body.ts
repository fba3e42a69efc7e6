// Reading the JSON body of an image generation: capped while it streams in (413 past the cap),
// within the body timeouts, parsed once under the JSON rules of src/relay/body.ts.
import { parseJson, readBody } from "../relay/body.ts";

/** A generation body is a prompt of at most 32000 characters plus a few fields: 1 MiB is ample. */
export const MAX_JSON_BYTES = 1024 * 1024;

export async function readJsonBody(request: Request, cap = MAX_JSON_BYTES): Promise<unknown> {
  return parseJson(await readBody(request, cap));
}
