// A Responses reasoning item carried through a Messages client as an opaque thinking signature.
// The Responses API takes a replayed reasoning item only with its `id`, and its encrypted_content
// is bound to that id, but a Messages thinking block has one opaque field, `signature` (and a
// redacted block one, `data`). So the reader seals `id` and `encrypted_content` into that field;
// when the client sends the block back, the Responses request writer opens it into the item again,
// and the Anthropic writer drops it (an OpenAI seal is no Anthropic signature and would be refused).
// The other way, Anthropic's redacted thinking reaches a Responses client as a reasoning item whose
// encrypted_content is the block's `data`, marked, so the item sent back becomes redacted_thinking
// again (unmarked, it would read as a thinking block whose signature is that data: refused).

const PREFIX = "mg-rs1.";

/** The signature a Messages client receives for a Responses reasoning item. */
export function sealReasoning(id: string | undefined, encrypted: string | undefined): string | undefined {
  if (encrypted === undefined) return undefined;
  // Without an id there is nothing to bind: pass the encrypted content as it is.
  if (id === undefined || id.includes(".")) return encrypted;
  return `${PREFIX}${id}.${encrypted}`;
}

/** The reasoning item's id and encrypted content, when `signature` is a seal. */
export function openReasoning(signature: string | undefined): { id: string; encrypted: string } | undefined {
  if (signature === undefined || !signature.startsWith(PREFIX)) return undefined;
  const dot = signature.indexOf(".", PREFIX.length);
  if (dot <= PREFIX.length) return undefined;
  return { id: signature.slice(PREFIX.length, dot), encrypted: signature.slice(dot + 1) };
}

const REDACTED = "mg-rd1.";

/** The encrypted_content a Responses client receives for an Anthropic redacted_thinking block. */
export function sealRedacted(data: string): string {
  return `${REDACTED}${data}`;
}

/** The redacted_thinking `data` of a reasoning item's encrypted_content, when it is one. */
export function openRedacted(encrypted: string | undefined): string | undefined {
  return encrypted?.startsWith(REDACTED) ? encrypted.slice(REDACTED.length) : undefined;
}
