// The last client and contract cases, through the compiled binary with a recording upstream
// speaking Anthropic's Messages protocol:
// - Qwen Code's interleaved-thinking request (budget_tokens = max_tokens, tools, the beta header);
// - json_object from Chat and Responses clients on an Anthropic channel, answered through a forced
//   tool and given back as the answer's text (stream and non-stream);
// - redacted thinking that reached a Responses client goes back to Anthropic as redacted_thinking
//   with its data intact (stream and non-stream);
// - the simulator quotes the tool result after a tool call.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type RunningGateway, startGateway } from "../helpers/gateway.ts";
import { type RecordingUpstream, startRecordingUpstream } from "../helpers/recording-upstream.ts";
import { sseJson } from "../helpers/sse.ts";

type Obj = Record<string, unknown>;

const ANTHROPIC_MODEL = "modelz-sonnet-4-5-20250929";
const SIM_MODEL = "modelz-haiku-4-5-20251001";
const BETA = "interleaved-thinking-2025-05-14";

let upstream: RecordingUpstream;
let gw: RunningGateway;

beforeAll(async () => {
  upstream = startRecordingUpstream(() => new Response("no script", { status: 500 }));
  gw = await startGateway({
    config: `
[routing]
max_attempts = 1

[[channels]]
kind = "anthropic"
name = "up-messages"
base_url = "${upstream.url}"
models = ["${ANTHROPIC_MODEL}"]

[[channels]]
kind = "sim"
name = "sim"
models = ["${SIM_MODEL}", "modelx-5.4-mini"]
`,
  });
});
afterAll(async () => {
  await gw.dispose();
  await upstream.stop();
});

function post(path: string, body: Obj, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${gw.url}${path}`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${gw.key}`,
      "content-type": "application/json",
      "anthropic-version": "2023-06-01",
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

/** A complete Messages answer with these content blocks. */
function message(content: Obj[], stopReason = "end_turn"): Response {
  return Response.json({
    id: "msg_up",
    type: "message",
    role: "assistant",
    model: ANTHROPIC_MODEL,
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    usage: { input_tokens: 12, output_tokens: 7 },
  });
}

/** The same blocks as a Messages event stream (text, tool_use and redacted_thinking blocks). */
function messageStream(content: Obj[], stopReason = "end_turn"): Response {
  const events: [string, Obj][] = [
    [
      "message_start",
      {
        type: "message_start",
        message: {
          id: "msg_up",
          type: "message",
          role: "assistant",
          model: ANTHROPIC_MODEL,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 12, output_tokens: 1 },
        },
      },
    ],
  ];
  content.forEach((block, index) => {
    if (block.type === "text") {
      events.push([
        "content_block_start",
        { type: "content_block_start", index, content_block: { type: "text", text: "" } },
      ]);
      events.push([
        "content_block_delta",
        { type: "content_block_delta", index, delta: { type: "text_delta", text: block.text } },
      ]);
    } else if (block.type === "tool_use") {
      const start = { ...block, input: {} };
      events.push(["content_block_start", { type: "content_block_start", index, content_block: start }]);
      const json = JSON.stringify(block.input);
      for (const piece of [json.slice(0, 4), json.slice(4)]) {
        events.push([
          "content_block_delta",
          { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: piece } },
        ]);
      }
    } else {
      events.push(["content_block_start", { type: "content_block_start", index, content_block: block }]);
    }
    events.push(["content_block_stop", { type: "content_block_stop", index }]);
  });
  events.push([
    "message_delta",
    {
      type: "message_delta",
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: 7 },
    },
  ]);
  events.push(["message_stop", { type: "message_stop" }]);
  const text = events.map(([name, data]) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`).join("");
  return new Response(text, { headers: { "content-type": "text/event-stream" } });
}

const answerBody = (request: { json: unknown }) => request.json as Obj;

describe("Anthropic thinking budget with interleaved thinking (Qwen Code)", () => {
  const tools = ["read_file", "write_file", "edit", "glob", "grep", "run_shell_command"].map((name) => ({
    name,
    description: `the ${name} tool`,
    input_schema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  }));
  const qwen = {
    model: ANTHROPIC_MODEL,
    max_tokens: 32000,
    thinking: { type: "enabled", budget_tokens: 32000 },
    tools,
    messages: [{ role: "user", content: "List the files." }],
  };

  test("budget_tokens equal to max_tokens, with tools and the beta: forwarded as sent", async () => {
    upstream.answer(() => message([{ type: "text", text: "Here they are." }]));
    const response = await post("/v1/messages", qwen, { "anthropic-beta": BETA });
    expect(response.status).toBe(200);
    const sent = upstream.last();
    expect(sent.headers["anthropic-beta"]).toBe(BETA);
    expect(answerBody(sent).thinking).toEqual({ type: "enabled", budget_tokens: 32000 });
    expect(answerBody(sent).max_tokens).toBe(32000);
  });

  test("the same on the simulator channel, streamed", async () => {
    const response = await post(
      "/v1/messages",
      { ...qwen, model: SIM_MODEL, stream: true },
      { "anthropic-beta": BETA },
    );
    expect(response.status).toBe(200);
    const events = await sseJson(response);
    expect(events.at(-1)?.type).toBe("message_stop");
  });

  test("without the beta, or without tools, the provider's rule holds: 400 naming the field and the way out", async () => {
    for (const [body, headers] of [
      [qwen, {}],
      [{ ...qwen, tools: undefined }, { "anthropic-beta": BETA }],
    ] as const) {
      const response = await post("/v1/messages", body, headers);
      expect(response.status).toBe(400);
      const { error } = (await response.json()) as { error: { message: string } };
      expect(error.message).toContain("thinking.budget_tokens");
      expect(error.message).toContain(BETA);
    }
  });
});

describe("json_object through an Anthropic channel", () => {
  const ANSWER = { city: "Paris", population: 2100000 };
  const forced = (body: Obj) => {
    expect(body.tools).toEqual([
      expect.objectContaining({ name: "modelgate_json_answer", input_schema: { type: "object" } }),
    ]);
    expect(body.tool_choice).toEqual({ type: "tool", name: "modelgate_json_answer" });
    expect(body.thinking).toBeUndefined();
  };
  const toolUse = { type: "tool_use", id: "toolu_1", name: "modelgate_json_answer", input: ANSWER };

  test("Chat, non-stream: a forced answer tool, read back as the message text", async () => {
    upstream.answer(() => message([toolUse], "tool_use"));
    const response = await post("/v1/chat/completions", {
      model: ANTHROPIC_MODEL,
      response_format: { type: "json_object" },
      messages: [{ role: "user", content: "Capital of France as JSON" }],
    });
    expect(response.status).toBe(200);
    forced(answerBody(upstream.last()));
    const body = (await response.json()) as { choices: { message: Obj; finish_reason: string }[] };
    expect(JSON.parse(String(body.choices[0]?.message.content))).toEqual(ANSWER);
    expect(body.choices[0]?.message.tool_calls).toBeUndefined();
    expect(body.choices[0]?.finish_reason).toBe("stop");
  });

  test("Chat, stream: the tool input arrives as content deltas, finish_reason stop", async () => {
    upstream.answer(() => messageStream([toolUse], "tool_use"));
    const response = await post("/v1/chat/completions", {
      model: ANTHROPIC_MODEL,
      stream: true,
      response_format: { type: "json_object" },
      messages: [{ role: "user", content: "Capital of France as JSON" }],
    });
    expect(response.status).toBe(200);
    const chunks = await sseJson(response);
    forced(answerBody(upstream.last()));
    const deltas = chunks.flatMap((c) => (c.choices as { delta: Obj; finish_reason: string | null }[]) ?? []);
    const text = deltas.map((d) => (typeof d.delta.content === "string" ? d.delta.content : "")).join("");
    expect(JSON.parse(text)).toEqual(ANSWER);
    expect(deltas.some((d) => d.delta.tool_calls !== undefined)).toBe(false);
    expect(deltas.map((d) => d.finish_reason).filter((f) => f !== null)).toEqual(["stop"]);
  });

  test("Responses text.format json_object: the output text is the JSON object", async () => {
    upstream.answer(() => message([toolUse], "tool_use"));
    const response = await post("/v1/responses", {
      model: ANTHROPIC_MODEL,
      input: "Capital of France as JSON",
      text: { format: { type: "json_object" } },
    });
    expect(response.status).toBe(200);
    forced(answerBody(upstream.last()));
    const body = (await response.json()) as { output: Obj[]; status: string };
    const texts = body.output.flatMap((item) =>
      item.type === "message" ? (item.content as Obj[]).map((c) => String(c.text)) : [],
    );
    expect(JSON.parse(texts.join(""))).toEqual(ANSWER);
    expect(body.output.some((item) => item.type === "function_call")).toBe(false);
    expect(body.status).toBe("completed");
  });
});

describe("redacted thinking from a Responses client goes back as redacted_thinking", () => {
  const DATA =
    "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj==";
  const blocks = [
    { type: "redacted_thinking", data: DATA },
    { type: "text", text: "Done." },
  ];

  for (const stream of [false, true]) {
    test(stream ? "stream" : "non-stream", async () => {
      upstream.answer(() => (stream ? messageStream(blocks) : message(blocks)));
      const first = await post("/v1/responses", { model: ANTHROPIC_MODEL, input: "Think hard.", stream });
      expect(first.status).toBe(200);
      let output: Obj[];
      if (stream) {
        const events = await sseJson(first);
        output = events.filter((e) => e.type === "response.output_item.done").map((e) => e.item as Obj);
      } else output = ((await first.json()) as { output: Obj[] }).output;
      const reasoning = output.find((item) => item.type === "reasoning");
      expect(reasoning?.encrypted_content).toBeString();
      const said = (output.find((item) => item.type === "message")?.content ?? []) as Obj[];

      upstream.answer(() => message([{ type: "text", text: "Again." }]));
      const second = await post("/v1/responses", {
        model: ANTHROPIC_MODEL,
        input: [
          { role: "user", content: "Think hard." },
          reasoning,
          {
            role: "assistant",
            content: said.map((c) => ({ type: "output_text", text: c.text })),
          },
          { role: "user", content: "And again." },
        ],
      });
      expect(second.status).toBe(200);
      const sent = answerBody(upstream.last()).messages as { role: string; content: Obj[] }[];
      const assistant = sent.find((m) => m.role === "assistant");
      expect(assistant?.content[0]).toEqual({ type: "redacted_thinking", data: DATA });
      expect(assistant?.content.some((b) => b.type === "thinking")).toBe(false);
    });
  }
});

test("the simulator's answer after a tool call quotes the tool result, not the tool schemas", async () => {
  const response = await post("/v1/chat/completions", {
    model: "modelx-5.4-mini",
    tools: [
      {
        type: "function",
        function: {
          name: "get_weather",
          description: "SCHEMA-TEXT the weather",
          parameters: {
            type: "object",
            properties: { city: { type: "string", description: "SCHEMA-TEXT" } },
          },
        },
      },
    ],
    messages: [
      { role: "user", content: "Weather in Paris? use get_weather" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: "call_1",
            type: "function",
            function: { name: "get_weather", arguments: '{"city":"Paris"}' },
          },
        ],
      },
      { role: "tool", tool_call_id: "call_1", content: "RESULT-MARKER sunny and 21 degrees" },
    ],
  });
  expect(response.status).toBe(200);
  const body = (await response.json()) as { choices: { message: { content: string } }[] };
  const text = body.choices[0]?.message.content ?? "";
  expect(text).toContain('The tool returned "RESULT-MARKER sunny and 21 degrees"');
  expect(text).not.toContain("SCHEMA-TEXT");
});
