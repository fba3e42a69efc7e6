// A stream relayed from a channel that maps the client's model id to the upstream's own name
// (issue 17, item 9): every event names the id the client asked for — Chat chunks, Responses
// `response.model`, Messages `message.model` — whatever the upstream's JSON spacing, while text
// that merely mentions the upstream's name (escaped inside a JSON string) reaches the client as sent.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { renameModel } from "../../src/pipeline/relay/stream.ts";
import { type RunningGateway, startGateway } from "../helpers/gateway.ts";
import { byteSlices, type RecordingUpstream, startRecordingUpstream } from "../helpers/recording-upstream.ts";
import { sseJson } from "../helpers/sse.ts";
import { post } from "./text-setup.ts";

const MENTION = 'Say "model": "up-name" here.';
const STREAMS: Record<string, string> = {
  "/v1/chat/completions": [
    `data: {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "up-name", "choices": [{"index": 0, "delta": {"role": "assistant", "content": ${JSON.stringify(MENTION)}}, "finish_reason": null}]}`,
    `data: {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "up-name", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}}`,
    "data: [DONE]",
  ].join("\n\n"),
  "/v1/responses": [
    `event: response.created\ndata: {"type":"response.created","sequence_number":0,"response":{"id":"r1","object":"response","created_at":1,"status":"in_progress","model":"up-name","output":[]}}`,
    `event: response.output_text.delta\ndata: {"type":"response.output_text.delta","sequence_number":1,"item_id":"m1","output_index":0,"content_index":0,"delta":${JSON.stringify(MENTION)},"logprobs":[]}`,
    `event: response.completed\ndata: {"type":"response.completed","sequence_number":2,"response":{"id":"r1","object":"response","created_at":1,"status":"completed","model":"up-name","output":[],"usage":{"input_tokens":3,"output_tokens":4,"total_tokens":7}}}`,
  ].join("\n\n"),
  "/v1/messages": [
    `event: message_start\ndata: {"type":"message_start","message":{"id":"m1","type":"message","role":"assistant","model":"up-name","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":1}}}`,
    `event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
    `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":${JSON.stringify(MENTION)}}}`,
    `event: content_block_stop\ndata: {"type":"content_block_stop","index":0}`,
    `event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":4}}`,
    `event: message_stop\ndata: {"type":"message_stop"}`,
  ].join("\n\n"),
};

let upstream: RecordingUpstream;
let gw: RunningGateway;

beforeAll(async () => {
  upstream = startRecordingUpstream((request) => ({
    chunks: byteSlices(`${STREAMS[request.path] ?? ""}\n\n`, 7),
  }));
  const channel = (kind: string, name: string, base: string, model: string) => `
[[channels]]
kind = "${kind}"
name = "${name}"
base_url = "${base}"
models = ["${model}"]
model_map = { "${model}" = "up-name" }
`;
  gw = await startGateway({
    config:
      channel("openai-chat", "chat", `${upstream.url}/v1`, "modelx-5.2") +
      channel("openai-responses", "responses", `${upstream.url}/v1`, "modelx-5.4") +
      channel("anthropic", "messages", upstream.url, "modelz-sonnet-4-6"),
  });
}, 30_000);
afterAll(async () => {
  await gw.dispose();
  await upstream.stop();
});

describe("a mapped model's stream names the client's id", () => {
  test("Chat: every chunk", async () => {
    const body = { model: "modelx-5.2", stream: true, messages: [{ role: "user", content: "hi" }] };
    const chunks = await sseJson(await post(gw, "/v1/chat/completions", body));
    expect(chunks.length).toBe(2);
    for (const chunk of chunks) expect(chunk.model).toBe("modelx-5.2");
    expect((chunks[0] as { choices: { delta: { content: string } }[] }).choices[0]?.delta.content).toBe(
      MENTION,
    );
  });

  test("Responses: response.model of created and completed", async () => {
    const frames = await sseJson(
      await post(gw, "/v1/responses", { model: "modelx-5.4", stream: true, input: "hi" }),
    );
    const responses = frames.flatMap((f) => (f.response ? [f.response as { model: string }] : []));
    expect(responses.map((r) => r.model)).toEqual(["modelx-5.4", "modelx-5.4"]);
    expect(frames.find((f) => f.type === "response.output_text.delta")?.delta).toBe(MENTION);
  });

  test("Messages: message.model of message_start", async () => {
    const body = {
      model: "modelz-sonnet-4-6",
      max_tokens: 50,
      stream: true,
      messages: [{ role: "user", content: "hi" }],
    };
    const frames = await sseJson(await post(gw, "/v1/messages", body));
    expect(frames[0]?.message).toMatchObject({ model: "modelz-sonnet-4-6" });
    expect(frames.find((f) => f.type === "content_block_delta")?.delta).toMatchObject({ text: MENTION });
  });
});

test("renameModel leaves bytes that already name the id untouched (same object)", () => {
  const bytes = new TextEncoder().encode('data: {"model": "m"}\n\n');
  expect(renameModel(bytes, "m")).toBe(bytes);
  expect(new TextDecoder().decode(renameModel(bytes, "client"))).toBe('data: {"model": "client"}\n\n');
});

test("renameModel renames an event's own model only, never a tool's or the client's metadata", () => {
  const created = {
    type: "response.created",
    response: {
      id: "r1",
      model: "up-name",
      tools: [{ type: "image_generation", model: "gpt-image-1" }],
      metadata: { model: "client-tag" },
      instructions: 'Answer as {"model": "x"}',
    },
  };
  const chunk = { id: "c1", model: "up-name", choices: [{ index: 0, delta: { content: "}]" } }] };
  const text = `event: response.created\ndata: ${JSON.stringify(created)}\n\ndata: ${JSON.stringify(chunk)}\n\n`;
  const out = new TextDecoder().decode(renameModel(new TextEncoder().encode(text), "client"));
  const [first, second] = out
    .split("\n\n")
    .filter((e) => e !== "")
    .map((e) => JSON.parse(e.slice(e.indexOf("data: ") + 6)) as Record<string, unknown>);
  expect(first).toEqual({ ...created, response: { ...created.response, model: "client" } });
  expect(second).toEqual({ ...chunk, model: "client" });
});
