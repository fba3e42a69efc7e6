// A Chat upstream's stream whose parts interleave (arguments of call 0 after call 1 started, text
// after a call began), translated for Messages and Responses clients through the relay's own
// translateStream: every tool call arrives with its full arguments, blocks never overlap, and a
// well-behaved single-call stream reads into exactly the events it always did.
import { describe, expect, test } from "bun:test";
import { translateStream } from "../../src/pipeline/relay/translated.ts";
import { replyReader, translateAnswer } from "../../src/protocols/translate.ts";
import { streamUsage } from "../../src/protocols/usage.ts";
import { ZERO_USAGE } from "../../src/wire/text-form.ts";
import { eventsOf } from "../../src/wire/translate/convert.ts";

type Obj = Record<string, unknown>;

const chunk = (delta: Obj, finish: string | null = null): Obj => ({
  id: "chatcmpl-1",
  model: "m",
  choices: [{ index: 0, delta, finish_reason: finish }],
});
const callStart = (index: number, id: string, name: string): Obj =>
  chunk({ tool_calls: [{ index, id, type: "function", function: { name, arguments: "" } }] });
const args = (index: number, json: string): Obj =>
  chunk({ tool_calls: [{ index, function: { arguments: json } }] });
const FINISH = chunk({}, "tool_calls");

/** Interleaved parallel calls: 0 starts, 1 starts, 0 args, 1 args, 0 args, finish. */
const INTERLEAVED = [
  chunk({ role: "assistant", content: null }),
  callStart(0, "call_a", "weather"),
  callStart(1, "call_b", "time"),
  args(0, '{"city":'),
  args(1, '{"zone":"UTC"}'),
  args(0, '"Paris"}'),
  FINISH,
];
const FULL = { weather: { city: "Paris" }, time: { zone: "UTC" } };

/** The client's events for an upstream Chat stream of `chunks` (then `tail`, `[DONE]` by default). */
async function translated(to: "messages" | "responses", chunks: Obj[], tail = "data: [DONE]\n\n") {
  const sse = chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join("") + tail;
  const translation = { from: "chat", to, model: "m", inputEstimate: 1, request: {} } as const;
  const body = new Response(sse).body ?? new ReadableStream<Uint8Array>();
  const { body: out } = translateStream(translation, body, streamUsage("chat"));
  const text = await new Response(out).text();
  return text
    .split("\n\n")
    .filter((e) => e.includes("data: "))
    .map((e) => JSON.parse(e.slice(e.indexOf("data: ") + 6)) as Obj);
}

/** Messages blocks checked for strict sequence (start → deltas → stop, one at a time, indices 0, 1, …). */
function messagesBlocks(events: Obj[]): { block: Obj; json: string; text: string }[] {
  const blocks: { block: Obj; json: string; text: string }[] = [];
  let open: number | undefined;
  for (const e of events) {
    if (e.type === "content_block_start") {
      expect(open).toBeUndefined();
      expect(e.index).toBe(blocks.length);
      open = e.index as number;
      blocks.push({ block: e.content_block as Obj, json: "", text: "" });
    } else if (e.type === "content_block_delta") {
      expect(e.index).toBe(open as number);
      const delta = e.delta as Obj;
      const b = blocks[open as number];
      if (b && delta.type === "input_json_delta") b.json += String(delta.partial_json);
      if (b && delta.type === "text_delta") b.text += String(delta.text);
    } else if (e.type === "content_block_stop") {
      expect(e.index).toBe(open as number);
      open = undefined;
    }
  }
  expect(open).toBeUndefined();
  return blocks;
}

describe("Chat stream with interleaved tool calls", () => {
  test("Messages: two tool_use blocks, sequential, each input the call's full arguments", async () => {
    const events = await translated("messages", INTERLEAVED);
    const blocks = messagesBlocks(events);
    expect(blocks.map((b) => [b.block.id, b.block.name])).toEqual([
      ["call_a", "weather"],
      ["call_b", "time"],
    ]);
    for (const b of blocks) expect(JSON.parse(b.json)).toEqual(FULL[b.block.name as keyof typeof FULL]);
    expect(events.at(-2)).toMatchObject({ type: "message_delta", delta: { stop_reason: "tool_use" } });
    expect(events.at(-1)).toMatchObject({ type: "message_stop" });
  });

  test("Responses: function_call_arguments complete per item, items one after another", async () => {
    const events = await translated("responses", INTERLEAVED);
    const deltas = new Map<string, string>();
    let open: string | undefined;
    for (const e of events) {
      if (e.type === "response.output_item.added") {
        expect(open).toBeUndefined();
        open = String((e.item as Obj).id);
      } else if (e.type === "response.function_call_arguments.delta") {
        expect(e.item_id).toBe(open as string);
        deltas.set(open as string, (deltas.get(open as string) ?? "") + String(e.delta));
      } else if (e.type === "response.output_item.done") {
        expect((e.item as Obj).id).toBe(open as string);
        open = undefined;
      }
    }
    const done = events.filter((e) => e.type === "response.function_call_arguments.done");
    expect(done.map((e) => [e.name, JSON.parse(String(e.arguments))])).toEqual([
      ["weather", FULL.weather],
      ["time", FULL.time],
    ]);
    for (const e of done) expect(deltas.get(String(e.item_id))).toBe(String(e.arguments));
    const completed = events.at(-1) as Obj;
    expect(completed.type).toBe("response.completed");
    const output = (completed.response as Obj).output as Obj[];
    expect(output.map((o) => [o.call_id, o.arguments])).toEqual([
      ["call_a", '{"city":"Paris"}'],
      ["call_b", '{"zone":"UTC"}'],
    ]);
  });

  test("text after a tool call began is delivered, after the tool block, and the call keeps its late arguments", async () => {
    const events = await translated("messages", [
      callStart(0, "call_a", "weather"),
      args(0, '{"city":'),
      chunk({ content: "Checking" }),
      chunk({ content: " now." }),
      args(0, '"Paris"}'),
      FINISH,
    ]);
    const blocks = messagesBlocks(events);
    expect(blocks.map((b) => b.block.type)).toEqual(["tool_use", "text"]);
    expect(JSON.parse(blocks[0]?.json ?? "")).toEqual(FULL.weather);
    expect(blocks[1]?.text).toBe("Checking now.");
  });

  test("an upstream error after a held part: well-formed blocks, then the error", async () => {
    const events = await translated(
      "messages",
      [callStart(0, "call_a", "weather"), callStart(1, "call_b", "time"), args(1, '{"zone":')],
      `data: ${JSON.stringify({ error: { message: "overloaded" } })}\n\n`,
    );
    const blocks = messagesBlocks(events);
    expect(blocks.map((b) => [b.block.id, b.json])).toEqual([
      ["call_a", ""],
      ["call_b", '{"zone":'],
    ]);
    expect(events.at(-1)).toMatchObject({ type: "error", error: { message: "overloaded" } });
  });

  test("an upstream that stops after a held part never starts it", async () => {
    const events = await translated(
      "messages",
      [callStart(0, "call_a", "weather"), callStart(1, "call_b", "time"), args(1, '{"zone":')],
      "",
    );
    const starts = events.filter((e) => e.type === "content_block_start");
    expect(starts.map((e) => (e.content_block as Obj).id)).toEqual(["call_a"]);
    expect(events.some((e) => e.type === "content_block_delta" && e.index !== 0)).toBe(false);
  });
});

describe("Chat stream with one tool call", () => {
  test("reads into the same internal events as before the hold rule, streamed live", () => {
    const reader = replyReader("chat");
    const per = [
      chunk({ role: "assistant", content: null }),
      callStart(0, "call_a", "weather"),
      args(0, '{"city":'),
      args(0, '"Paris"}'),
      FINISH,
    ].map((c) => eventsOf(reader.read(undefined, JSON.stringify(c))));
    expect([...per, eventsOf(reader.read(undefined, "[DONE]"))]).toEqual([
      [{ type: "start", id: "chatcmpl-1", model: "m", usage: undefined }],
      [{ type: "part_start", index: 0, part: { type: "tool_call", id: "call_a", name: "weather" } }],
      [{ type: "arguments", index: 0, json: '{"city":' }],
      [{ type: "arguments", index: 0, json: '"Paris"}' }],
      [],
      [
        { type: "part_stop", index: 0 },
        { type: "finish", stop: "tool", stopSequence: undefined, usage: ZERO_USAGE },
      ],
    ]);
  });
});

describe("Chat non-stream answer", () => {
  test("tool_calls arrive whole: each becomes a complete tool_use block", () => {
    const answer = translateAnswer(
      "chat",
      "messages",
      {
        id: "chatcmpl-1",
        model: "m",
        choices: [
          {
            index: 0,
            finish_reason: "tool_calls",
            message: {
              role: "assistant",
              content: null,
              tool_calls: [
                {
                  id: "call_a",
                  type: "function",
                  function: { name: "weather", arguments: '{"city":"Paris"}' },
                },
                { id: "call_b", type: "function", function: { name: "time", arguments: '{"zone":"UTC"}' } },
              ],
            },
          },
        ],
      },
      "m",
      1,
    );
    expect(answer.content).toEqual([
      { type: "tool_use", id: "call_a", name: "weather", input: FULL.weather, caller: { type: "direct" } },
      { type: "tool_use", id: "call_b", name: "time", input: FULL.time, caller: { type: "direct" } },
    ]);
  });
});
