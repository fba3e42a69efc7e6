// Chat Completions dialects: the one place where a channel's quirks (src/config/presets.ts) change
// a request body, as the last step before the HTTP call (src/upstream/text.ts). Protocol-level
// translation happens earlier (src/wire/translate); this only bends an OpenAI-valid Chat body to
// what one server reads: the output-cap field, the developer role, parallel_tool_calls, the
// reasoning effort's place. A body no quirk touches is sent as it came, bytes unchanged.
import type { Quirks } from "../config/presets.ts";

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

/** The body to send to a channel with these quirks: `body` itself when nothing applies, else the rewritten JSON. */
export function applyDialect(q: Quirks, body: string | Uint8Array): string | Uint8Array {
  if (isIdentity(q)) return body;
  const text = typeof body === "string" ? body : decoder.decode(body);
  if (!TRIGGERS.some((t) => text.includes(t))) return body;
  const parsed: unknown = JSON.parse(text);
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return body;
  const json = parsed as Body;
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

function messagesOf(json: Body): Body[] {
  const messages = json.messages;
  if (!Array.isArray(messages)) return [];
  return messages.filter((m): m is Body => typeof m === "object" && m !== null);
}

function developerRole(q: Quirks, json: Body): boolean {
  if (q.developer_role) return false;
  let changed = false;
  for (const message of messagesOf(json)) {
    if (message.role === "developer") {
      message.role = "system";
      changed = true;
    }
  }
  return changed;
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
