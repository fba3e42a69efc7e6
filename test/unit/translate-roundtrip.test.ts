// Unit tests of the translation modules: requests into every protocol, thinking blocks and their
// signatures across a round trip, the documented drop rules, stop reasons and usage conventions,
// and stream translation event by event.
import { describe, expect, test } from "bun:test";
import {
  readChatRequest,
  readMessagesRequest,
  readResponsesRequest,
  replyReader,
  replyWriter,
  translateAnswer,
  writeRequest,
} from "../../src/protocols/translate.ts";
import { decodeChatRequest } from "../../src/wire/chat.ts";
import { decodeMessagesRequest } from "../../src/wire/messages.ts";
import { decodeResponsesRequest } from "../../src/wire/responses.ts";
import { eventsOf } from "../../src/wire/translate/convert.ts";
import { usageFromAnthropic, usageToAnthropic } from "../../src/wire/translate/finish.ts";

type Obj = Record<string, unknown>;

const claudeTurn = decodeMessagesRequest({
  model: "modelz-sonnet-4-6",
  max_tokens: 32000,
  system: [{ type: "text", text: "You are terse.", cache_control: { type: "ephemeral" } }],
  thinking: { type: "adaptive" },
  output_config: { effort: "high" },
  context_management: { edits: [{ type: "clear_thinking_20251015", keep: "all" }] },
  metadata: { user_id: "u" },
  tools: [{ name: "Bash", input_schema: { type: "object", properties: { command: { type: "string" } } } }],
  messages: [
    { role: "user", content: "list files" },
    {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "I should run ls.", signature: "SIG-abc" },
        { type: "tool_use", id: "toolu_1", name: "Bash", input: { command: "ls" } },
      ],
    },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "a.txt" }] },
  ],
});

describe("Messages → Responses request", () => {
  const body = writeRequest("responses", readMessagesRequest(claudeTurn), "m", 4096);
  test("thinking without a reasoning item id is not sent (the schema requires it), then the call and its output", () => {
    expect(body.instructions).toBe("You are terse.");
    expect(body.input).toEqual([
      { type: "message", role: "user", content: [{ type: "input_text", text: "list files" }] },
      { type: "function_call", call_id: "toolu_1", name: "Bash", arguments: '{"command":"ls"}' },
      { type: "function_call_output", call_id: "toolu_1", output: "a.txt" },
    ]);
    expect(body.reasoning).toEqual({ effort: "high", summary: "auto" });
  });
  test("Anthropic-only fields are dropped", () => {
    expect(Object.keys(body).sort()).toEqual(
      [
        "include",
        "input",
        "instructions",
        "max_output_tokens",
        "model",
        "reasoning",
        "store",
        "stream",
        "tool_choice",
        "tools",
      ].sort(),
    );
  });
  test("a Responses reasoning item reaches Messages as a signed thinking block, and Responses with its id", () => {
    const input = [
      ...(body.input as Obj[]).slice(0, 1),
      {
        type: "reasoning",
        id: "rs_1",
        summary: [{ type: "summary_text", text: "I should run ls." }],
        encrypted_content: "SIG-abc",
      },
      ...(body.input as Obj[]).slice(1),
    ];
    const ir = readResponsesRequest(decodeResponsesRequest({ ...body, input }));
    expect(writeRequest("responses", ir, "m", 4096).input).toEqual(input);
    const again = writeRequest("messages", ir, "m", 4096);
    const messages = again.messages as Obj[];
    expect(messages[1]).toEqual({
      role: "assistant",
      content: [
        { type: "thinking", thinking: "I should run ls.", signature: "SIG-abc" },
        { type: "tool_use", id: "toolu_1", name: "Bash", input: { command: "ls" } },
      ],
    });
    expect(messages[2]).toEqual({
      role: "user",
      content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "a.txt" }],
    });
    expect(again.thinking).toEqual({ type: "enabled", budget_tokens: 16384 });
  });
});

describe("Chat ↔ Messages requests", () => {
  const chat = decodeChatRequest({
    model: "modelx-5.4",
    messages: [
      { role: "system", content: "Be brief." },
      {
        role: "user",
        content: [
          { type: "text", text: "What is here?" },
          { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
        ],
      },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_1", type: "function", function: { name: "look", arguments: '{"x":1}' } }],
      },
      { role: "tool", tool_call_id: "call_1", content: "a cat" },
    ],
    tool_choice: "required",
    tools: [{ type: "function", function: { name: "look", parameters: { type: "object" } } }],
    temperature: 1.5,
    response_format: { type: "json_object" },
  });
  const body = writeRequest("messages", readChatRequest(chat), "m", 1000);
  test("system, images, tool calls and results, tool_choice, json_object, temperature cap", () => {
    // json_object has no schema form on Messages: it becomes an instruction after the system prompt.
    expect(body.system).toBe("Be brief.\n\nAnswer with a single JSON object and nothing else.");
    expect(body.max_tokens).toBe(1000);
    expect((body.messages as Obj[])[0]).toEqual({
      role: "user",
      content: [
        { type: "text", text: "What is here?" },
        { type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } },
      ],
    });
    expect((body.messages as Obj[])[1]).toEqual({
      role: "assistant",
      content: [{ type: "tool_use", id: "call_1", name: "look", input: { x: 1 } }],
    });
    expect(body.tool_choice).toEqual({ type: "any" });
    expect(body.output_config).toBeUndefined();
    expect(body.temperature).toBe(1);
  });
  test("thinking has no place in Chat and is dropped there; tool results become tool messages", () => {
    const back = writeRequest("chat", readMessagesRequest(claudeTurn), "m", 1);
    const messages = back.messages as Obj[];
    expect(messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool"]);
    expect(messages[2]).toEqual({
      role: "assistant",
      content: null,
      tool_calls: [
        { id: "toolu_1", type: "function", function: { name: "Bash", arguments: '{"command":"ls"}' } },
      ],
    });
    expect(back.reasoning_effort).toBe("high");
  });
});

describe("answers", () => {
  test("an Anthropic answer as Responses: reasoning with encrypted_content, function_call, integer usage", () => {
    const out = translateAnswer(
      "messages",
      "responses",
      {
        id: "msg_1",
        content: [
          { type: "thinking", thinking: "hmm", signature: "S1" },
          { type: "tool_use", id: "toolu_9", name: "f", input: { a: 1 } },
        ],
        stop_reason: "tool_use",
        usage: { input_tokens: 10, cache_read_input_tokens: 5, output_tokens: 7 },
      },
      "modelz-sonnet-4-6",
      0,
    );
    const output = out.output as Obj[];
    expect(output[0]).toMatchObject({
      type: "reasoning",
      summary: [{ type: "summary_text", text: "hmm" }],
      encrypted_content: "S1",
    });
    expect(output[1]).toMatchObject({
      type: "function_call",
      call_id: "toolu_9",
      name: "f",
      arguments: '{"a":1}',
      status: "completed",
    });
    expect(out.status).toBe("completed");
    expect(out.usage).toEqual({
      input_tokens: 15,
      input_tokens_details: { cached_tokens: 5, cache_write_tokens: 0 },
      output_tokens: 7,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 22,
    });
  });
  test("a Responses answer cut by max_output_tokens is max_tokens / length elsewhere", () => {
    const json = {
      id: "r",
      status: "incomplete",
      incomplete_details: { reason: "max_output_tokens" },
      output: [{ type: "message", content: [{ type: "output_text", text: "hi" }] }],
      usage: { input_tokens: 3, output_tokens: 2 },
    };
    expect(translateAnswer("responses", "messages", json, "m", 0).stop_reason).toBe("max_tokens");
    const chat = translateAnswer("responses", "chat", json, "m", 0);
    expect((chat.choices as Obj[])[0]?.finish_reason).toBe("length");
  });
  test("Anthropic usage excludes cache tokens; the internal form includes them", () => {
    const u = usageFromAnthropic({
      input_tokens: 4,
      cache_read_input_tokens: 6,
      cache_creation_input_tokens: 2,
      output_tokens: 9,
    });
    expect(u).toEqual({ input: 12, cached: 6, cacheWrite: 2, output: 9, reasoning: 0 });
    expect(usageToAnthropic(u)).toMatchObject({
      input_tokens: 4,
      cache_creation_input_tokens: 2,
      cache_read_input_tokens: 6,
      output_tokens: 9,
    });
  });
});

describe("streams, event by event", () => {
  test("Chat chunks → Messages events: each chunk is written as soon as it is read", () => {
    const reader = replyReader("chat");
    const writer = replyWriter("messages", "modelx-5.2", 11);
    const push = (data: string) =>
      eventsOf(reader.read(undefined, data))
        .flatMap((e) => writer.push(e))
        .map((b) => new TextDecoder().decode(b));
    const first = push(
      JSON.stringify({ id: "c", choices: [{ index: 0, delta: { role: "assistant", content: "" } }] }),
    );
    expect(first[0]).toStartWith("event: message_start");
    expect(first[0]).toContain('"input_tokens":11');
    const text = push(JSON.stringify({ id: "c", choices: [{ index: 0, delta: { content: "Hel" } }] }));
    expect(text.map((t) => t.split("\n")[0])).toEqual([
      "event: content_block_start",
      "event: content_block_delta",
    ]);
    push(JSON.stringify({ id: "c", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }));
    push(JSON.stringify({ id: "c", choices: [], usage: { prompt_tokens: 11, completion_tokens: 1 } }));
    const end = push("[DONE]");
    expect(end.map((t) => t.split("\n")[0])).toEqual([
      "event: content_block_stop",
      "event: message_delta",
      "event: message_stop",
    ]);
    expect(end[1]).toContain('"stop_reason":"end_turn"');
    expect(writer.answer()).toMatchObject({
      content: [{ type: "text", text: "Hel" }],
      usage: { input_tokens: 11, output_tokens: 1 },
    });
  });

  test("Messages thinking stream → Responses: the signature lands in encrypted_content of output_item.done", () => {
    const reader = replyReader("messages");
    const writer = replyWriter("responses", "m", 0);
    const events: [string, Obj][] = [
      ["message_start", { message: { id: "msg", usage: { input_tokens: 3, output_tokens: 1 } } }],
      ["content_block_start", { index: 0, content_block: { type: "thinking", thinking: "", signature: "" } }],
      ["content_block_delta", { index: 0, delta: { type: "thinking_delta", thinking: "ponder" } }],
      ["content_block_delta", { index: 0, delta: { type: "signature_delta", signature: "SIG" } }],
      ["content_block_stop", { index: 0 }],
      ["message_delta", { delta: { stop_reason: "end_turn" }, usage: { output_tokens: 5 } }],
      ["message_stop", {}],
    ];
    const out = events.flatMap(([name, data]) =>
      eventsOf(reader.read(name, JSON.stringify({ type: name, ...data }))).flatMap((e) => writer.push(e)),
    );
    const payloads = out.map(
      (b) => JSON.parse(new TextDecoder().decode(b).split("data: ")[1] ?? "{}") as Obj,
    );
    const done = payloads.find((p) => p.type === "response.output_item.done");
    expect(done?.item).toMatchObject({
      type: "reasoning",
      encrypted_content: "SIG",
      summary: [{ type: "summary_text", text: "ponder" }],
    });
    expect(payloads.at(-1)).toMatchObject({
      type: "response.completed",
      response: { usage: { input_tokens: 3, output_tokens: 5 } },
    });
    expect(payloads.map((p) => p.sequence_number)).toEqual(payloads.map((_, i) => i));
  });
});

describe("translated usage reads usage as billing does", () => {
  test("DeepSeek's prompt_cache_hit_tokens become a Messages client's cache reads", () => {
    const chat = {
      id: "c1",
      object: "chat.completion",
      model: "up",
      choices: [{ index: 0, message: { role: "assistant", content: "hi" }, finish_reason: "stop" }],
      usage: {
        prompt_tokens: 100,
        completion_tokens: 10,
        total_tokens: 110,
        prompt_cache_hit_tokens: 60,
        prompt_cache_miss_tokens: 40,
      },
    };
    const answer = translateAnswer("chat", "messages", chat, "modelz-sonnet-4-6", 1);
    expect(answer.usage).toMatchObject({ input_tokens: 40, cache_read_input_tokens: 60, output_tokens: 10 });
  });

  test("Anthropic cache writes given only by lifetime reach a Chat client", () => {
    const message = {
      id: "m1",
      type: "message",
      role: "assistant",
      model: "up",
      content: [{ type: "text", text: "hi" }],
      stop_reason: "end_turn",
      stop_sequence: null,
      usage: {
        input_tokens: 10,
        output_tokens: 5,
        cache_creation: { ephemeral_5m_input_tokens: 20, ephemeral_1h_input_tokens: 30 },
      },
    };
    const answer = translateAnswer("messages", "chat", message, "modelx-5.4", 1);
    expect(answer.usage).toMatchObject({
      prompt_tokens: 60,
      prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 50 },
    });
  });
});
