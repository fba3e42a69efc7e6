// A tool call an upstream answers without its id, through the compiled gateway: a Messages client
// served by a Chat Completions channel gets 502 upstream_failed naming the missing field (read
// through the answer's schema), not a tool_use block whose id is the text "undefined"; the same
// answer with its id translates.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { chatChannelToml } from "../helpers/chat-rig.ts";
import { type RunningGateway, startGateway } from "../helpers/gateway.ts";
import { type RecordingUpstream, startRecordingUpstream } from "../helpers/recording-upstream.ts";

const MODEL = "modelx-5.4-mini";
let withId = false;
let upstream: RecordingUpstream;
let gw: RunningGateway;

beforeAll(async () => {
  upstream = startRecordingUpstream(() =>
    Response.json({
      id: "chatcmpl-1",
      object: "chat.completion",
      model: "upstream-model",
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: null,
            tool_calls: [
              {
                ...(withId ? { id: "call_7" } : {}),
                type: "function",
                function: { name: "lookup", arguments: "{}" },
              },
            ],
          },
          finish_reason: "tool_calls",
        },
      ],
      usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 },
    }),
  );
  gw = await startGateway({ config: chatChannelToml("chat-only", upstream.url, MODEL, 1) });
}, 30_000);

afterAll(async () => {
  await gw?.dispose();
  await upstream?.stop();
});

function ask(): Promise<Response> {
  return fetch(`${gw.url}/v1/messages`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${gw.key}`,
      "content-type": "application/json",
      "anthropic-version": "2023-06-01",
    },
    body: JSON.stringify({
      model: MODEL,
      max_tokens: 64,
      messages: [{ role: "user", content: "look it up" }],
    }),
  });
}

test("a tool call without its id: 502 naming the field; with it: the tool_use block carries it", async () => {
  const refused = await ask();
  expect(refused.status).toBe(502);
  const body = (await refused.json()) as { type: string; error: { type: string; message: string } };
  expect(body.error.message).toContain("choices[0].message.tool_calls[0].id");
  expect(JSON.stringify(body)).not.toContain('"undefined"');

  withId = true;
  const answered = await ask();
  expect(answered.status).toBe(200);
  const reply = (await answered.json()) as { content: { type: string; id?: string; name?: string }[] };
  expect(reply.content.find((b) => b.type === "tool_use")).toMatchObject({ id: "call_7", name: "lookup" });
}, 30_000);
