// The non-stream relay: the upstream's JSON answer (read whole and parsed once by the call stage,
// src/pipeline/call.ts, which read its usage too) goes to the client as its bytes, unchanged unless
// the upstream named its own model (a mapped id such as `llama3.2`): the client sees the model id
// it asked for. A channel that spoke another protocol is translated instead (translated.ts).

const encoder = new TextEncoder();

/** The answer's bytes with `model` set to the id the client asked for (unchanged when it already is). */
export function relayJson(bytes: Uint8Array, parsed: unknown, model: string): Uint8Array {
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return bytes;
  const answer = parsed as Record<string, unknown>;
  if (typeof answer.model !== "string" || answer.model === model) return bytes;
  return encoder.encode(JSON.stringify({ ...answer, model }));
}
