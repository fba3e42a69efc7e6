// The settled cost on every answer (src/wire/cost.ts), read as clients read it: the official
// `openai` and `@anthropic-ai/sdk` SDKs still parse every stream (the cost is an SSE comment after
// the last event) and expose the header of a non-stream answer; the figure in both places is the
// usage record's cost, to the nano-USD.
import { afterAll, beforeAll, describe, expect, spyOn, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import { createParser } from "eventsource-parser";
import OpenAI from "openai";
import { type RunningGateway, startGateway } from "../helpers/gateway.ts";
import { waitForUsage } from "../helpers/usage-records.ts";

let gw: RunningGateway;
let openai: OpenAI;
let anthropic: Anthropic;
const warn = spyOn(console, "warn");
const error = spyOn(console, "error");

beforeAll(async () => {
  gw = await startGateway({ config: "[sim]\nseed = 3\n" });
  const key = gw.key ?? "";
  openai = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  anthropic = new Anthropic({ apiKey: key, baseURL: gw.url, maxRetries: 0 });
}, 30_000);
afterAll(async () => {
  await gw?.dispose();
  expect(warn).not.toHaveBeenCalled();
  expect(error).not.toHaveBeenCalled();
}, 30_000);

/** USD text (`0.000125`) → nano-USD. */
function nanosOf(usd: string): number {
  const [whole = "0", fraction = ""] = usd.split(".");
  return Number(whole) * 1e9 + Number(fraction.padEnd(9, "0"));
}

/** The record's cost for the answer's request id, in nano-USD. */
async function recordedCost(requestId: string | null): Promise<number> {
  expect(requestId).not.toBeNull();
  return (await waitForUsage(gw, requestId ?? "")).cost_nanos;
}

describe("non-stream answers carry x-modelgate-cost-usd", () => {
  test("openai Responses and Chat, Anthropic Messages", async () => {
    const responses = await openai.responses.create({ model: "modelx-5.5", input: "Say hi." }).withResponse();
    const chat = await openai.chat.completions
      .create({ model: "modelx-5.4", messages: [{ role: "user", content: "Say hi." }] })
      .withResponse();
    const messages = await anthropic.messages
      .create({
        model: "modelz-sonnet-4-6",
        max_tokens: 100,
        messages: [{ role: "user", content: "Say hi." }],
      })
      .withResponse();
    expect(responses.data.output_text.length).toBeGreaterThan(0);
    expect(chat.data.choices[0]?.message.content?.length).toBeGreaterThan(0);
    expect(messages.data.content.length).toBeGreaterThan(0);
    for (const { response } of [responses, chat, messages]) {
      const header = response.headers.get("x-modelgate-cost-usd");
      expect(header).toMatch(/^\d+\.\d+$/);
      const cost = nanosOf(header ?? "");
      expect(cost).toBeGreaterThan(0);
      expect(cost).toBe(await recordedCost(response.headers.get("x-request-id")));
    }
  });
});

/** The cost comment a raw stream ends with, and the request id. */
async function rawStream(path: string, body: unknown): Promise<{ cost: number; requestId: string | null }> {
  const headers: Record<string, string> = path.startsWith("/v1/messages")
    ? { "x-api-key": gw.key ?? "", "anthropic-version": "2023-06-01" }
    : { authorization: `Bearer ${gw.key ?? ""}` };
  const response = await fetch(`${gw.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(200);
  const text = await response.text();
  const match = /\n: x-modelgate-cost-usd (\d+\.\d+)\n\n$/.exec(text);
  expect(match).not.toBeNull();
  // eventsource-parser (under the Vercel AI SDK) reads the same events and skips the comment.
  const skipped: string[] = [];
  const events: string[] = [];
  const parser = createParser({ onEvent: (e) => events.push(e.data), onComment: (c) => skipped.push(c) });
  parser.feed(text);
  expect(skipped.map((c) => c.trim())).toEqual([`x-modelgate-cost-usd ${match?.[1]}`]);
  expect(events.length).toBeGreaterThan(2);
  expect(events.every((data) => data === "[DONE]" || JSON.parse(data) !== null)).toBe(true);
  return { cost: nanosOf(match?.[1] ?? ""), requestId: response.headers.get("x-request-id") };
}

describe("streams end with the cost as an SSE comment, and the SDKs still parse them", () => {
  test("the comment is the last line and names the recorded cost", async () => {
    for (const [path, body] of [
      ["/v1/responses", { model: "modelx-5.5", input: "Say hi.", stream: true }],
      [
        "/v1/chat/completions",
        {
          model: "modelx-5.4",
          messages: [{ role: "user", content: "Say hi." }],
          stream: true,
          stream_options: { include_usage: true },
        },
      ],
      [
        "/v1/messages",
        {
          model: "modelz-sonnet-4-6",
          max_tokens: 100,
          messages: [{ role: "user", content: "Hi" }],
          stream: true,
        },
      ],
    ] as const) {
      const { cost, requestId } = await rawStream(path, body);
      expect(cost).toBeGreaterThan(0);
      expect(cost).toBe(await recordedCost(requestId));
    }
  });

  test("openai: Responses and Chat streams iterate to their last event", async () => {
    const types: string[] = [];
    for await (const event of await openai.responses.create({
      model: "modelx-5.5",
      input: "Say hi.",
      stream: true,
    }))
      types.push(event.type);
    expect(types.at(-1)).toBe("response.completed");
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of await openai.chat.completions.create({
      model: "modelx-5.4",
      messages: [{ role: "user", content: "Say hi." }],
      stream: true,
      stream_options: { include_usage: true },
    }))
      chunks.push(chunk);
    expect(chunks.at(-1)?.usage?.total_tokens).toBeGreaterThan(0);
    const helper = openai.chat.completions.stream({
      model: "modelx-5.4",
      messages: [{ role: "user", content: "Say hi." }],
    });
    expect((await helper.finalChatCompletion()).choices[0]?.finish_reason).toBe("stop");
  });

  test("anthropic: a Messages stream iterates to message_stop and the helper builds the message", async () => {
    const types: string[] = [];
    for await (const event of await anthropic.messages.create({
      model: "modelz-sonnet-4-6",
      max_tokens: 100,
      messages: [{ role: "user", content: "Say hi." }],
      stream: true,
    }))
      types.push(event.type);
    expect(types.at(-1)).toBe("message_stop");
    const final = await anthropic.messages
      .stream({
        model: "modelz-sonnet-4-6",
        max_tokens: 100,
        messages: [{ role: "user", content: "Say hi." }],
      })
      .finalMessage();
    expect(final.stop_reason).toBe("end_turn");
    expect(final.usage.output_tokens).toBeGreaterThan(0);
  });
});
