// The request every target receives (and the same question as a Responses and a Messages request,
// for the per-path figures), and the probe that checks a target answers it correctly (through the
// bench upstream: the fixed answer text must come back).
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import * as v from "valibot";
import type { Protocol } from "./answers.ts";
import { MODEL } from "./targets.ts";

const MESSAGES = [
  { role: "system", content: "You are a concise assistant." },
  { role: "user", content: "In one sentence, what does an API gateway do?" },
];

export const CHAT_BODY = JSON.stringify({ model: MODEL, messages: MESSAGES, max_tokens: 64 });
export const STREAM_BODY = JSON.stringify({ model: MODEL, messages: MESSAGES, max_tokens: 64, stream: true });
/** A stream the upstream holds open after its first event (for the concurrent-streams figure). */
export function holdBody(holdMs: number): string {
  return JSON.stringify({
    model: MODEL,
    messages: MESSAGES,
    max_tokens: 64,
    stream: true,
    user: `bench-hold-${holdMs}`,
  });
}

/** A non-stream request the upstream answers after `delayMs` (for the sustained-throughput figure). */
export function delayBody(delayMs: number): string {
  return JSON.stringify({ model: MODEL, messages: MESSAGES, max_tokens: 64, user: `bench-delay-${delayMs}` });
}

/** The same question in each client protocol, stream or not. */
export function clientBody(protocol: Protocol, stream: boolean): string {
  const system = MESSAGES[0]?.content ?? "";
  const question = MESSAGES[1]?.content ?? "";
  const more = stream ? { stream: true } : {};
  switch (protocol) {
    case "chat":
      return stream ? STREAM_BODY : CHAT_BODY;
    case "responses":
      return JSON.stringify({
        model: MODEL,
        instructions: system,
        input: question,
        max_output_tokens: 64,
        ...more,
      });
    case "messages":
      return JSON.stringify({
        model: MODEL,
        system,
        messages: [{ role: "user", content: question }],
        max_tokens: 64,
        ...more,
      });
  }
}

/** Writes a non-stream body where wrk reads it (default: the Chat one); returns the path. */
export function writeBodyFile(dir: string, protocol: Protocol = "chat"): string {
  const file = join(dir, `${protocol}-body.json`);
  writeFileSync(file, clientBody(protocol, false));
  return file;
}

const CompletionSchema = v.object({
  choices: v.pipe(v.array(v.object({ message: v.object({ content: v.string() }) })), v.minLength(1)),
});

export type ProbeResult = { ok: true; streamEvents: number } | { ok: false; status: number; message: string };

async function send(url: string, headers: Record<string, string>, body: string): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json" },
    body,
    signal: AbortSignal.timeout(10_000),
  });
}

/** One non-stream and one stream request; both must come back through the upstream. */
export async function probe(url: string, headers: Record<string, string>): Promise<ProbeResult> {
  const response = await send(url, headers, CHAT_BODY);
  const text = await response.text();
  if (response.status !== 200) return { ok: false, status: response.status, message: text.slice(0, 300) };
  let content: string;
  try {
    content = v.parse(CompletionSchema, JSON.parse(text)).choices[0]?.message.content ?? "";
  } catch (error) {
    return {
      ok: false,
      status: 200,
      message: `not a chat completion: ${String(error)}: ${text.slice(0, 200)}`,
    };
  }
  if (!content.startsWith("The gateway relays this fixed answer")) {
    return { ok: false, status: 200, message: `unexpected content: ${content.slice(0, 100)}` };
  }
  const stream = await send(url, headers, STREAM_BODY);
  const events = await stream.text();
  if (stream.status !== 200 || !events.includes("data: [DONE]")) {
    return {
      ok: false,
      status: stream.status,
      message: `stream did not end with [DONE]: ${events.slice(-200)}`,
    };
  }
  const count = events.split("\n").filter((line) => line.startsWith("data:") && !line.includes("[DONE]"));
  return { ok: true, streamEvents: count.length };
}
