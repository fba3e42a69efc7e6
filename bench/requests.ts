// The request every target receives, and the probe that checks a target answers it correctly
// (through the bench upstream: the fixed answer text must come back).
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import * as v from "valibot";
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

/** Writes the non-stream body where wrk reads it; returns the path. */
export function writeBodyFile(dir: string): string {
  const file = join(dir, "chat-body.json");
  writeFileSync(file, CHAT_BODY);
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
