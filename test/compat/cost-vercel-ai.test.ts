// The settled cost's SSE comment at a stream's end (src/wire/cost.ts), read by the Vercel AI SDK:
// its OpenAI provider (Chat Completions and Responses) and its Anthropic provider stream every
// answer through the gateway to the end, with the finish reason and the usage the gateway
// recorded, and no error part — the comment line is skipped like any other SSE comment.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import { type LanguageModel, streamText } from "ai";
import { type RunningGateway, startGateway } from "../helpers/gateway.ts";

let gw: RunningGateway;

beforeAll(async () => {
  gw = await startGateway({ config: "[sim]\nseed = 5\n" });
}, 30_000);
afterAll(async () => {
  await gw?.dispose();
}, 30_000);

/** Streams one answer to its end; the parts the SDK saw, and what it concluded. */
async function streamed(model: LanguageModel) {
  const result = streamText({ model, prompt: "Say hi.", maxOutputTokens: 64, maxRetries: 0 });
  const kinds: string[] = [];
  for await (const part of result.fullStream) kinds.push(part.type);
  return { kinds, text: await result.text, finish: await result.finishReason, usage: await result.usage };
}

describe("the Vercel AI SDK reads streams that end with the cost comment", () => {
  const key = () => gw.key ?? "";
  const cases: [string, () => LanguageModel][] = [
    [
      "OpenAI provider, Chat Completions",
      () => createOpenAI({ apiKey: key(), baseURL: `${gw.url}/v1` }).chat("modelx-5.4"),
    ],
    [
      "OpenAI provider, Responses",
      () => createOpenAI({ apiKey: key(), baseURL: `${gw.url}/v1` }).responses("modelx-5.5"),
    ],
    [
      "Anthropic provider, Messages",
      () => createAnthropic({ apiKey: key(), baseURL: `${gw.url}/v1` })("modelz-sonnet-4-6"),
    ],
  ];
  for (const [name, model] of cases) {
    test(name, async () => {
      const { kinds, text, finish, usage } = await streamed(model());
      expect(kinds).not.toContain("error");
      expect(kinds.at(-1)).toBe("finish");
      expect(text.length).toBeGreaterThan(0);
      expect(finish).toBe("stop");
      expect(usage.outputTokens).toBeGreaterThan(0);
    });
  }
});
