// The requests the coding agents and front ends of docs/clients.md send with the settings given
// there (an OpenAI-compatible base URL ending in /v1 and a Bearer key), replayed through the
// compiled gateway: Open WebUI lists the models and chats over a stream; opencode (AI SDK's
// openai-compatible provider), Cline and Qwen Code stream Chat Completions with
// `stream_options.include_usage`, tools and a tool turn. The clients themselves are not run here.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createParser } from "eventsource-parser";
import { type RunningGateway, startGateway } from "../helpers/gateway.ts";

type Obj = Record<string, unknown>;
type Chunk = { choices: { delta: Obj; finish_reason: string | null }[]; usage?: Obj | null };

let gw: RunningGateway;
let base = "";

beforeAll(async () => {
  gw = await startGateway();
  base = `${gw.url}/v1`;
});
afterAll(() => gw.dispose());

const headers = () => ({ authorization: `Bearer ${gw.key}`, "content-type": "application/json" });

/** A streamed Chat request as these clients send it; its chunks, parsed. */
async function streamChat(body: Obj): Promise<Chunk[]> {
  const response = await fetch(`${base}/chat/completions`, {
    method: "POST",
    headers: headers(),
    body: JSON.stringify({ stream: true, stream_options: { include_usage: true }, ...body }),
  });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toContain("text/event-stream");
  const chunks: Chunk[] = [];
  let done = false;
  const parser = createParser({
    onEvent: (event) => {
      if (event.data === "[DONE]") done = true;
      else chunks.push(JSON.parse(event.data) as Chunk);
    },
  });
  parser.feed(await response.text());
  expect(done).toBe(true);
  return chunks;
}

const TOOLS = [
  {
    type: "function",
    function: {
      name: "read_file",
      description: "Read a file of the workspace",
      parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
    },
  },
];

test("Open WebUI: the model list, then a streamed chat with usage", async () => {
  const list = await fetch(`${base}/models`, { headers: { authorization: `Bearer ${gw.key}` } });
  expect(list.status).toBe(200);
  const ids = ((await list.json()) as { data: { id: string }[] }).data.map((m) => m.id);
  expect(ids).toContain("modelx-5.5");
  expect(ids).toContain("modelz-sonnet-4-6");
  const chunks = await streamChat({ model: "modelx-5.5", messages: [{ role: "user", content: "Hello" }] });
  const text = chunks.flatMap((c) => c.choices.map((choice) => choice.delta.content ?? "")).join("");
  expect(text.length).toBeGreaterThan(0);
  expect(chunks.at(-1)?.usage).toMatchObject({
    prompt_tokens: expect.any(Number),
    completion_tokens: expect.any(Number),
  });
});

describe("opencode, Cline and Qwen Code: a streamed tool turn on Chat Completions", () => {
  for (const model of ["modelx-5.5", "modelz-sonnet-4-6"]) {
    test(model, async () => {
      const messages: Obj[] = [
        { role: "system", content: "You are a coding agent." },
        { role: "user", content: "Use read_file on README.md" },
      ];
      const first = await streamChat({ model, messages, tools: TOOLS, tool_choice: "auto" });
      const calls = first.flatMap((c) =>
        c.choices.flatMap((choice) => (choice.delta.tool_calls ?? []) as Obj[]),
      );
      const call = calls.find((c) => c.id !== undefined) as { id: string; function: { name: string } };
      expect(call.function.name).toBe("read_file");
      const args = calls.map((c) => String((c.function as Obj | undefined)?.arguments ?? "")).join("");
      expect(JSON.parse(args)).toHaveProperty("path");
      expect(first.flatMap((c) => c.choices.map((choice) => choice.finish_reason)).filter(Boolean)).toEqual([
        "tool_calls",
      ]);

      const second = await streamChat({
        model,
        tools: TOOLS,
        messages: [
          ...messages,
          {
            role: "assistant",
            content: null,
            tool_calls: [{ id: call.id, type: "function", function: { name: "read_file", arguments: args } }],
          },
          { role: "tool", tool_call_id: call.id, content: "# modelgate README" },
        ],
      });
      const text = second.flatMap((c) => c.choices.map((choice) => choice.delta.content ?? "")).join("");
      expect(text).toContain('The tool returned "# modelgate README"');
      expect(second.at(-1)?.usage).toMatchObject({ completion_tokens: expect.any(Number) });
    });
  }
});
