// Chat Completions dialects: the one place where a channel's quirks (src/config/presets.ts) change
// a request body, as the last step before the HTTP call (src/upstream/openai-chat/text.ts). Protocol-level
// translation happens earlier (src/wire/translate); this only bends an OpenAI-valid Chat body to
// what one server reads: the output-cap field, the developer role, parallel_tool_calls, the
// reasoning effort's place. A body no quirk touches is sent as it came, bytes unchanged. The caller
// passes the object the body was made from when it has one, so the body is never parsed again; that
// object is left as it is (a failover to another channel starts from it afresh).
import type { Quirks } from "../../config/presets.ts";

const decoder = new TextDecoder();

/** True when the quirks change nothing (OpenAI's own dialect): the body is never parsed. */
export function isIdentity(q: Quirks): boolean {
  return (
    q.max_tokens_field === "either" &&
    q.developer_role &&
    q.parallel_tool_calls &&
    q.reasoning_effort === "reasoning_effort"
  );
}

/** Field names whose presence in the text can make a quirk apply; without any, nothing is parsed. */
const TRIGGERS = [
  '"max_tokens"',
  '"max_completion_tokens"',
  '"developer"',
  '"parallel_tool_calls"',
  '"reasoning_effort"',
];

type Body = Record<string, unknown>;

/**
 * The body to send to a channel with these quirks: `body` itself when nothing applies, else the
 * rewritten JSON. `parsed` is `body` as an object, when the caller has it (never changed here).
 */
export function applyDialect(
  q: Quirks,
  body: string | Uint8Array,
  parsed?: Readonly<Body> | undefined,
): string | Uint8Array {
  if (isIdentity(q)) return body;
  let source: unknown = parsed;
  if (source === undefined) {
    const text = typeof body === "string" ? body : decoder.decode(body);
    if (!TRIGGERS.some((t) => text.includes(t))) return body;
    source = JSON.parse(text);
  }
  if (typeof source !== "object" || source === null || Array.isArray(source)) return body;
  // A shallow copy: the quirks below replace top-level fields and never write inside the caller's.
  const json: Body = { ...(source as Body) };
  const changed = [
    outputCap(q, json),
    developerRole(q, json),
    parallelToolCalls(q, json),
    reasoningEffort(q, json),
  ].some(Boolean);
  return changed ? JSON.stringify(json) : body;
}

function rename(json: Body, from: string, to: string): boolean {
  if (json[from] === undefined) return false;
  // A client that sent both meant the same cap; the one the server reads wins.
  json[to] ??= json[from];
  delete json[from];
  return true;
}

function outputCap(q: Quirks, json: Body): boolean {
  if (q.max_tokens_field === "max_tokens") return rename(json, "max_completion_tokens", "max_tokens");
  if (q.max_tokens_field === "max_completion_tokens")
    return rename(json, "max_tokens", "max_completion_tokens");
  return false;
}

function isDeveloper(message: unknown): message is Body {
  return typeof message === "object" && message !== null && (message as Body).role === "developer";
}

function developerRole(q: Quirks, json: Body): boolean {
  const messages = json.messages;
  if (q.developer_role || !Array.isArray(messages) || !messages.some(isDeveloper)) return false;
  // New message objects, not the caller's, get the system role.
  json.messages = messages.map((m) => (isDeveloper(m) ? { ...m, role: "system" } : m));
  return true;
}

function parallelToolCalls(q: Quirks, json: Body): boolean {
  if (q.parallel_tool_calls || json.parallel_tool_calls === undefined) return false;
  delete json.parallel_tool_calls;
  return true;
}

function reasoningEffort(q: Quirks, json: Body): boolean {
  const effort = json.reasoning_effort;
  if (q.reasoning_effort === "reasoning_effort" || effort === undefined) return false;
  delete json.reasoning_effort;
  if (q.reasoning_effort === "reasoning.effort" && effort !== null) {
    const reasoning = typeof json.reasoning === "object" && json.reasoning !== null ? json.reasoning : {};
    json.reasoning = { effort, ...reasoning };
  }
  return true;
}
