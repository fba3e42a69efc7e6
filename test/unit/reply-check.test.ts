// An upstream's complete answer is checked before translation for what the protocol requires of a
// tool call (its id and name): one lacking them is a typed error naming the field — the relay's 502
// — not a call whose id reads "undefined". Other fields stay optional and unknown ones are kept.
import { describe, expect, test } from "bun:test";
import { readReply, replyReader, tryTranslateAnswer } from "../../src/protocols/translate.ts";
import type { TextProtocol } from "../../src/wire/text-form.ts";

const chatAnswer = (call: Record<string, unknown>) => ({
  id: "chatcmpl-1",
  model: "m",
  choices: [
    {
      index: 0,
      message: { role: "assistant", content: null, tool_calls: [call] },
      finish_reason: "tool_calls",
    },
  ],
  usage: { prompt_tokens: 3, completion_tokens: 4 },
});
const messagesAnswer = (block: Record<string, unknown>) => ({
  id: "msg_1",
  type: "message",
  model: "m",
  content: [{ type: "text", text: "calling" }, block],
  stop_reason: "tool_use",
  usage: { input_tokens: 3, output_tokens: 4 },
});
const responsesAnswer = (item: Record<string, unknown>) => ({
  id: "resp_1",
  object: "response",
  model: "m",
  status: "completed",
  output: [item],
  usage: { input_tokens: 3, output_tokens: 4 },
});

const cases: [TextProtocol, unknown, string][] = [
  [
    "chat",
    chatAnswer({ type: "function", function: { name: "f", arguments: "{}" } }),
    "choices[0].message.tool_calls[0].id",
  ],
  [
    "chat",
    chatAnswer({ id: "call_1", type: "function", function: { arguments: "{}" } }),
    "choices[0].message.tool_calls[0].function.name",
  ],
  ["messages", messagesAnswer({ type: "tool_use", name: "f", input: {} }), "content[1].id"],
  ["responses", responsesAnswer({ type: "function_call", name: "f", arguments: "{}" }), "output[0].call_id"],
];

describe("a tool call without its id or name is an error naming the field", () => {
  for (const [from, answer, field] of cases) {
    test(`${from}: ${field}`, () => {
      const to: TextProtocol = from === "messages" ? "chat" : "messages";
      const translated = tryTranslateAnswer(from, to, answer, "client-model", 0);
      expect(translated.ok).toBe(false);
      if (translated.ok) return;
      expect(translated.error.kind).toBe("missing_field");
      expect(translated.error.message).toContain(field);
    });
  }

  test('read without the check (a stored answer), a missing id is empty, never the text "undefined"', () => {
    const reply = readReply(
      "chat",
      chatAnswer({ type: "function", function: { name: "f", arguments: "{}" } }),
    );
    const call = reply.parts.find((p) => p.type === "tool_call");
    expect(call).toMatchObject({ type: "tool_call", id: "", name: "f" });
  });

  test("a complete tool call, with fields no schema names, translates", () => {
    const answer = chatAnswer({
      id: "call_1",
      type: "function",
      function: { name: "f", arguments: "{}" },
      vendor_extra: 1,
    });
    const translated = tryTranslateAnswer("chat", "messages", answer, "client-model", 0);
    expect(translated.ok).toBe(true);
    if (!translated.ok) return;
    const content = translated.value.content as Record<string, unknown>[];
    expect(content.find((b) => b.type === "tool_use")).toMatchObject({ id: "call_1", name: "f" });
  });
});

// A stream is checked where its tool call starts: an event lacking the call's name (Chat, whose
// compatible servers may leave out the id), or its id or name (Messages `content_block_start`,
// Responses `output_item.added`), ends the translated stream with an error naming the field.
describe("a streamed tool call without its id or name ends the stream with an error naming the field", () => {
  const streams: [TextProtocol, string | undefined, Record<string, unknown>, string][] = [
    [
      "chat",
      undefined,
      { id: "c", choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: "call_1", function: {} }] } }] },
      "choices[0].delta.tool_calls[0].function.name",
    ],
    [
      "messages",
      "content_block_start",
      { type: "content_block_start", index: 0, content_block: { type: "tool_use", name: "f", input: {} } },
      "content_block.id",
    ],
    [
      "responses",
      "response.output_item.added",
      {
        type: "response.output_item.added",
        output_index: 0,
        item: { type: "function_call", id: "fc_1", name: "f", arguments: "" },
      },
      "item.call_id",
    ],
  ];
  for (const [from, name, event, field] of streams) {
    test(`${from}: ${field}`, () => {
      const reader = replyReader(from);
      const read = reader.read(name, JSON.stringify(event));
      expect(read.ok).toBe(true);
      const events = read.ok ? read.value : [];
      const error = events.find((e) => e.type === "error");
      expect(error?.type === "error" ? error.message : "").toContain(field);
      expect(events.some((e) => e.type === "part_start")).toBe(false);
    });
  }

  test("chat: a first delta with its name but no id still starts the call, named by its index", () => {
    const reader = replyReader("chat");
    const read = reader.read(
      undefined,
      JSON.stringify({
        id: "c",
        choices: [{ index: 0, delta: { tool_calls: [{ index: 2, function: { name: "f" } }] } }],
      }),
    );
    const events = read.ok ? read.value : [];
    expect(events).toContainEqual({
      type: "part_start",
      index: 0,
      part: { type: "tool_call", id: "call_2", name: "f" },
    });
    expect(events.some((e) => e.type === "error")).toBe(false);
  });
});
