// Reply translation edge cases, in process: Responses streams that skip content_part events or
// deliver content only in output_item.done, several reasoning summary parts, reasoning items that
// are redacted or empty, refusals toward each protocol, and the Messages stop reason when a refusal
// meets a length cut. Every emitted event is checked against the official-shape schemas too.
import { describe, expect, test } from "bun:test";
import { createParser } from "eventsource-parser";
import { replyReader, replyWriter, translateAnswer } from "../../src/protocols/translate.ts";
import type { TextProtocol } from "../../src/wire/text-form.ts";
import { eventsOf } from "../../src/wire/translate/convert.ts";
import {
  type ClientEvent,
  chatCompletion,
  message,
  problems,
  responseObject,
  streamProblems,
} from "./client-schemas.ts";

type Obj = Record<string, unknown>;

/** Runs upstream SSE events of `from` through the translation and returns the client's JSON events. */
function translateEvents(from: TextProtocol, to: TextProtocol, upstream: Obj[]): Obj[] {
  const reader = replyReader(from);
  const writer = replyWriter(to, "client-model", 7);
  const sse: ClientEvent[] = [];
  const parser = createParser({ onEvent: (e) => sse.push({ event: e.event, data: e.data }) });
  const decoder = new TextDecoder();
  const feed = (bytes: Uint8Array[]) => {
    for (const b of bytes) parser.feed(decoder.decode(b));
  };
  for (const e of upstream)
    for (const event of eventsOf(
      reader.read(typeof e.type === "string" ? e.type : undefined, JSON.stringify(e)),
    ))
      feed(writer.push(event));
  for (const event of reader.end()) feed(writer.push(event));
  expect(streamProblems(to, sse)).toEqual([]);
  return sse.filter((e) => e.data !== "[DONE]").map((e) => JSON.parse(e.data) as Obj);
}

const start = { type: "response.created", response: { id: "resp_1", model: "up", output: [] } };
const completed = (output: Obj[] = []) => ({
  type: "response.completed",
  response: {
    id: "resp_1",
    model: "up",
    status: "completed",
    output,
    usage: { input_tokens: 5, output_tokens: 3 },
  },
});
const messageAdded = {
  type: "response.output_item.added",
  output_index: 0,
  item: { type: "message", id: "m", content: [] },
};

function messagesText(events: Obj[]): string {
  return events
    .filter((e) => e.type === "content_block_delta")
    .map((e) => String((e.delta as Obj).text ?? ""))
    .join("");
}

describe("Responses upstream streams", () => {
  test("deltas without content_part.added still become text", () => {
    const out = translateEvents("responses", "messages", [
      start,
      messageAdded,
      { type: "response.output_text.delta", output_index: 0, content_index: 0, delta: "Hel" },
      { type: "response.output_text.delta", output_index: 0, content_index: 0, delta: "lo" },
      {
        type: "response.output_item.done",
        output_index: 0,
        item: { type: "message", content: [{ type: "output_text", text: "Hello" }] },
      },
      completed(),
    ]);
    expect(messagesText(out)).toBe("Hello");
    expect(out.filter((e) => e.type === "content_block_start")).toHaveLength(1);
  });

  test("content given only in output_item.done is sent whole, refusal as refusal", () => {
    const out = translateEvents("responses", "chat", [
      start,
      messageAdded,
      {
        type: "response.output_item.done",
        output_index: 0,
        item: { type: "message", content: [{ type: "refusal", refusal: "No." }] },
      },
      completed(),
    ]);
    const deltas = out.map((c) => ((c.choices as Obj[])[0]?.delta ?? {}) as Obj);
    expect(deltas.map((d) => d.refusal ?? "").join("")).toBe("No.");
    expect(deltas.map((d) => d.content ?? "").join("")).toBe("");
  });

  test("two summary parts are one thinking text, separated as the complete answer separates them", () => {
    const at = { item_id: "rs", output_index: 0 };
    const out = translateEvents("responses", "messages", [
      start,
      {
        type: "response.output_item.added",
        output_index: 0,
        item: { type: "reasoning", id: "rs", summary: [] },
      },
      { type: "response.reasoning_summary_text.delta", ...at, summary_index: 0, delta: "First." },
      { type: "response.reasoning_summary_text.delta", ...at, summary_index: 1, delta: "Second." },
      {
        type: "response.output_item.done",
        output_index: 0,
        item: { type: "reasoning", id: "rs", summary: [], encrypted_content: "ENC" },
      },
      completed(),
    ]);
    const thinking = out
      .filter((e) => e.type === "content_block_delta" && (e.delta as Obj).type === "thinking_delta")
      .map((e) => String((e.delta as Obj).thinking))
      .join("");
    const whole = translateAnswer(
      "responses",
      "messages",
      {
        output: [
          {
            type: "reasoning",
            summary: [
              { type: "summary_text", text: "First." },
              { type: "summary_text", text: "Second." },
            ],
          },
        ],
      },
      "m",
      0,
    );
    expect(thinking).toBe(String(((whole.content as Obj[])[0] as Obj).thinking));
    expect(out.find((e) => (e.delta as Obj | undefined)?.type === "signature_delta")?.delta).toEqual({
      type: "signature_delta",
      signature: "mg-rs1.rs.ENC",
    });
  });

  test("a reasoning item with only encrypted content is a redacted_thinking block; an empty one is nothing", () => {
    const out = translateEvents("responses", "messages", [
      start,
      {
        type: "response.output_item.added",
        output_index: 0,
        item: { type: "reasoning", id: "a", summary: [] },
      },
      {
        type: "response.output_item.done",
        output_index: 0,
        item: { type: "reasoning", id: "a", summary: [], encrypted_content: "R" },
      },
      {
        type: "response.output_item.added",
        output_index: 1,
        item: { type: "reasoning", id: "b", summary: [] },
      },
      {
        type: "response.output_item.done",
        output_index: 1,
        item: { type: "reasoning", id: "b", summary: [] },
      },
      completed(),
    ]);
    const blocks = out.filter((e) => e.type === "content_block_start").map((e) => e.content_block);
    expect(blocks).toEqual([{ type: "redacted_thinking", data: "mg-rs1.a.R" }]);
  });
});

describe("refusals toward each protocol", () => {
  const chatRefusal = {
    id: "c",
    object: "chat.completion",
    model: "up",
    choices: [
      { index: 0, message: { role: "assistant", content: null, refusal: "I won't." }, finish_reason: "stop" },
    ],
    usage: { prompt_tokens: 4, completion_tokens: 2, total_tokens: 6 },
  };

  test("Chat message.refusal → a Responses refusal part, a completed response", () => {
    const out = translateAnswer("chat", "responses", chatRefusal, "m", 0);
    expect(problems(responseObject, out)).toEqual([]);
    expect(out.status).toBe("completed");
    expect((out.output as Obj[])[0]).toMatchObject({
      type: "message",
      content: [{ type: "refusal", refusal: "I won't." }],
    });
  });

  test("Chat message.refusal → Chat message.refusal with null content (not content)", () => {
    const out = translateAnswer("chat", "chat", chatRefusal, "m", 0);
    expect(problems(chatCompletion, out)).toEqual([]);
    expect((out.choices as Obj[])[0]).toMatchObject({
      message: { content: null, refusal: "I won't." },
      finish_reason: "stop",
    });
  });

  test("→ Messages: the text as a text block, stop_reason refusal with its stop_details", () => {
    const out = translateAnswer("chat", "messages", chatRefusal, "m", 0);
    expect(problems(message, out)).toEqual([]);
    expect(out).toMatchObject({
      content: [{ type: "text", text: "I won't." }],
      stop_reason: "refusal",
      stop_details: { type: "refusal" },
    });
  });

  test("a refusal cut by the token limit stays max_tokens toward Messages", () => {
    const cut = { ...chatRefusal, choices: [{ ...chatRefusal.choices[0], finish_reason: "length" }] };
    expect(translateAnswer("chat", "messages", cut, "m", 0).stop_reason).toBe("max_tokens");
  });

  test("a streamed Responses refusal reaches a Messages client as text with stop_reason refusal", () => {
    const at = { item_id: "m", output_index: 0, content_index: 0 };
    const out = translateEvents("responses", "messages", [
      start,
      messageAdded,
      { type: "response.content_part.added", ...at, part: { type: "refusal", refusal: "" } },
      { type: "response.refusal.delta", ...at, delta: "Can't " },
      { type: "response.refusal.delta", ...at, delta: "do that." },
      { type: "response.refusal.done", ...at, refusal: "Can't do that." },
      { type: "response.content_part.done", ...at, part: { type: "refusal", refusal: "Can't do that." } },
      {
        type: "response.output_item.done",
        output_index: 0,
        item: { type: "message", content: [{ type: "refusal", refusal: "Can't do that." }] },
      },
      completed(),
    ]);
    expect(messagesText(out)).toBe("Can't do that.");
    expect(out.find((e) => e.type === "message_delta")).toMatchObject({ delta: { stop_reason: "refusal" } });
  });
});

test("cache writes reported by an OpenAI upstream reach every client", () => {
  const upstream = {
    output: [{ type: "message", content: [{ type: "output_text", text: "ok" }] }],
    status: "completed",
    usage: {
      input_tokens: 30,
      input_tokens_details: { cached_tokens: 10, cache_write_tokens: 6 },
      output_tokens: 2,
    },
  };
  expect(translateAnswer("responses", "messages", upstream, "m", 0).usage).toMatchObject({
    input_tokens: 14,
    cache_read_input_tokens: 10,
    cache_creation_input_tokens: 6,
  });
  expect(translateAnswer("responses", "chat", upstream, "m", 0).usage).toMatchObject({
    prompt_tokens: 30,
    prompt_tokens_details: { cached_tokens: 10, cache_write_tokens: 6 },
  });
});
