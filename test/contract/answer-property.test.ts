// Property: whatever reply the internal form holds — any mix of text, refusal, thinking with or
// without a signature, redacted thinking and tool calls, any stop and usage — each protocol's
// writer emits a complete answer and stream events that pass the official-shape schemas, and the
// same protocol's reader gets back the text, refusal and tool arguments it was given.
import { expect, test } from "bun:test";
import { createParser } from "eventsource-parser";
import fc from "fast-check";
import { replyReader, replyWriter } from "../../src/protocols/translate.ts";
import type { IrEvent, IrReply, IrReplyPart, TextProtocol } from "../../src/wire/text-form.ts";
import { eventsOf, replyEvents } from "../../src/wire/translate/convert.ts";
import { ANSWER_SCHEMAS, type ClientEvent, problems, streamProblems } from "./client-schemas.ts";

type Obj = Record<string, unknown>;
const PROTOCOLS: readonly TextProtocol[] = ["responses", "chat", "messages"];

const text = fc.string({ minLength: 1, maxLength: 12, unit: "grapheme" });
const part: fc.Arbitrary<IrReplyPart> = fc.oneof(
  fc.record({ type: fc.constant("text" as const), text }),
  fc.record({ type: fc.constant("refusal" as const), text }),
  fc.record({ type: fc.constant("thinking" as const), text, signature: fc.option(text, { nil: undefined }) }),
  fc.record({ type: fc.constant("redacted_thinking" as const), data: text }),
  fc.record({
    type: fc.constant("tool_call" as const),
    id: fc.stringMatching(/^call_[a-z0-9]{1,8}$/),
    name: fc.stringMatching(/^[a-z_]{1,10}$/),
    // Objects with plain keys: Messages carries arguments as an object, so only those survive as text.
    arguments: fc
      .dictionary(fc.stringMatching(/^[a-z]{1,6}$/), fc.jsonValue(), { maxKeys: 3 })
      .map((o) => JSON.stringify(o)),
  }),
);
const usage = fc
  .record({
    input: fc.nat(5000),
    cached: fc.nat(5000),
    cacheWrite: fc.nat(5000),
    output: fc.nat(5000),
    reasoning: fc.nat(5000),
  })
  .map((u) => ({ ...u, input: u.input + u.cached + u.cacheWrite, output: u.output + u.reasoning }));
const reply: fc.Arbitrary<IrReply> = fc.record({
  id: fc.constant("up_1"),
  model: fc.constant("upstream-model"),
  parts: fc.array(part, { maxLength: 5 }),
  stop: fc.constantFrom("end", "length", "tool", "stop_sequence", "refusal"),
  stopSequence: fc.option(text, { nil: undefined }),
  usage,
});

/** Pushes `events` through the writer of `to`; returns its SSE events (name and JSON) and its answer. */
function write(to: TextProtocol, events: IrEvent[]): { sse: ClientEvent[]; answer: Obj } {
  const writer = replyWriter(to, "client-model", 11);
  const sse: ClientEvent[] = [];
  const parser = createParser({ onEvent: (e) => sse.push({ event: e.event, data: e.data }) });
  const decoder = new TextDecoder();
  for (const event of events) for (const bytes of writer.push(event)) parser.feed(decoder.decode(bytes));
  return { sse, answer: writer.answer() };
}

/** Text, refusal and tool arguments as the reader of `protocol` gets them back, part by part. */
function readBack(protocol: TextProtocol, sse: ClientEvent[]): string[] {
  const reader = replyReader(protocol);
  const parts = new Map<number, { kind: string; text: string }>();
  for (const e of [...sse.flatMap((s) => eventsOf(reader.read(s.event, s.data))), ...reader.end()]) {
    if (e.type === "part_start") parts.set(e.index, { kind: e.part.type, text: "" });
    else if (e.type === "text" || e.type === "arguments") {
      const p = parts.get(e.index);
      if (p) p.text += e.type === "text" ? e.text : e.json;
    }
  }
  return [...parts.values()]
    .filter((p) => p.kind !== "thinking" && p.kind !== "redacted_thinking")
    .map((p) => `${p.kind}:${p.text}`);
}

/** What `protocol` carries of the reply's text, refusals and tool arguments, in its own order. */
function carried(protocol: TextProtocol, r: IrReply): string[] {
  const out: string[] = [];
  for (const p of r.parts) {
    if (p.type === "text") out.push(`text:${p.text}`);
    // Messages has no refusal block: a refusal is written as text (and stop_reason refusal).
    else if (p.type === "refusal") out.push(`${protocol === "messages" ? "text" : "refusal"}:${p.text}`);
    else if (p.type === "tool_call") out.push(`tool_call:${p.arguments}`);
  }
  return out;
}

/**
 * A Chat message has one content and one refusal, so the parts of each kind are joined (a reader may
 * split them where another kind came between); the order of content, refusal and calls follows the
 * first chunk of each, so Chat compares as a set.
 */
function comparable(protocol: TextProtocol, list: string[]): string[] {
  if (protocol !== "chat") return list;
  const join = (kind: string) =>
    list
      .filter((s) => s.startsWith(`${kind}:`))
      .map((s) => s.slice(kind.length + 1))
      .join("");
  const texts = ["text", "refusal"].filter((k) => join(k) !== "").map((k) => `${k}:${join(k)}`);
  return [...texts, ...list.filter((s) => s.startsWith("tool_call:"))].sort();
}

test("every writer's answer and events pass the official schemas for any reply, and its reader reads back what it wrote", () => {
  fc.assert(
    fc.property(reply, (r) => {
      const events = replyEvents(r);
      for (const to of PROTOCOLS) {
        const { sse, answer } = write(to, events);
        expect(problems(ANSWER_SCHEMAS[to], answer)).toEqual([]);
        expect(streamProblems(to, sse)).toEqual([]);
        expect(comparable(to, readBack(to, sse))).toEqual(comparable(to, carried(to, r)));
      }
    }),
    // A fixed seed keeps CI repeatable; FUZZ_SEED explores others.
    { numRuns: 300, seed: Number(process.env.FUZZ_SEED ?? 140014) },
  );
});
