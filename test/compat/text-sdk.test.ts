// The official TypeScript SDKs (`openai`, `@anthropic-ai/sdk`) against the compiled gateway with
// its in-process simulator: create and stream on all three endpoints, the SDK stream helpers,
// tools with a result round trip, and parse with a JSON schema — with no SDK warnings.
import { afterAll, beforeAll, describe, expect, spyOn, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { zodResponseFormat, zodTextFormat } from "openai/helpers/zod";
import { z } from "zod";
import { type RunningGateway, startGateway } from "../helpers/gateway.ts";

let gw: RunningGateway;
let openai: OpenAI;
let anthropic: Anthropic;
let bearer: Anthropic;
const warn = spyOn(console, "warn");
const error = spyOn(console, "error");

beforeAll(async () => {
  gw = await startGateway();
  const key = gw.key ?? "";
  openai = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  anthropic = new Anthropic({ apiKey: key, baseURL: gw.url, maxRetries: 0 });
  bearer = new Anthropic({ authToken: key, apiKey: null, baseURL: gw.url, maxRetries: 0 });
}, 30_000);
afterAll(async () => {
  await gw?.dispose();
  // Any SDK complaint (unknown event, unparsable chunk) goes through console.warn / console.error.
  expect(warn).not.toHaveBeenCalled();
  expect(error).not.toHaveBeenCalled();
}, 30_000);

const Weather = z.object({ city: z.string(), days: z.number().int().min(1).max(7) });
const weatherSchema = {
  type: "object",
  properties: { city: { type: "string" }, days: { type: "integer", minimum: 1, maximum: 7 } },
  required: ["city", "days"],
  additionalProperties: false,
};
const Report = z.object({ title: z.string(), score: z.number().min(0).max(1), tags: z.array(z.string()) });

describe("openai Responses", () => {
  test("create, stream and the stream helper agree", async () => {
    const made = await openai.responses.create({
      model: "modelx-5.5",
      instructions: "Be brief.",
      input: "Say hi.",
    });
    expect(made.output_text.length).toBeGreaterThan(10);
    const types: string[] = [];
    for await (const event of await openai.responses.create({
      model: "modelx-5.5",
      instructions: "Be brief.",
      input: "Say hi.",
      stream: true,
    })) {
      types.push(event.type);
    }
    expect(types[0]).toBe("response.created");
    expect(types.at(-1)).toBe("response.completed");
    const helper = openai.responses.stream({
      model: "modelx-5.5",
      instructions: "Be brief.",
      input: "Say hi.",
    });
    let deltas = "";
    helper.on("response.output_text.delta", (e) => {
      deltas += e.delta;
    });
    const final = await helper.finalResponse();
    expect(final.output_text).toBe(made.output_text);
    expect(deltas).toBe(made.output_text);
  });

  test("tool call and result round trip", async () => {
    const tools = [
      { type: "function" as const, name: "get_weather", parameters: weatherSchema, strict: true },
    ];
    const first = await openai.responses.create({ model: "modelx-5.5", input: "Call get_weather.", tools });
    const call = first.output.find((i) => i.type === "function_call");
    if (call?.type !== "function_call") throw new Error("no function_call");
    expect(Weather.safeParse(JSON.parse(call.arguments)).success).toBe(true);
    const second = await openai.responses.create({
      model: "modelx-5.5",
      tools,
      input: [
        { role: "user", content: "Call get_weather." },
        call,
        { type: "function_call_output", call_id: call.call_id, output: '{"temp_c":21}' },
      ],
    });
    expect(second.output_text).toContain("The tool returned");
  });

  test("parse with a zod text format", async () => {
    const parsed = await openai.responses.parse({
      model: "modelx-5.5",
      input: "Report.",
      text: { format: zodTextFormat(Report, "report") },
    });
    expect(Report.safeParse(parsed.output_parsed).success).toBe(true);
  });
});

describe("openai Chat Completions", () => {
  test("create, stream and the stream helper agree", async () => {
    const messages = [{ role: "user" as const, content: "Say hi." }];
    const made = await openai.chat.completions.create({ model: "modelx-5.4", messages });
    const text = made.choices[0]?.message.content ?? "";
    expect(text.length).toBeGreaterThan(10);
    let streamed = "";
    let usage = 0;
    const stream = await openai.chat.completions.create({
      model: "modelx-5.4",
      messages,
      stream: true,
      stream_options: { include_usage: true },
    });
    for await (const chunk of stream) {
      streamed += chunk.choices[0]?.delta.content ?? "";
      usage = chunk.usage?.completion_tokens ?? usage;
    }
    expect(streamed).toBe(text);
    expect(usage).toBe(made.usage?.completion_tokens ?? -1);
    const final = await openai.chat.completions
      .stream({ model: "modelx-5.4", messages })
      .finalChatCompletion();
    expect(final.choices[0]?.message.content).toBe(text);
  });

  test("tool call and result round trip", async () => {
    const tools = [
      { type: "function" as const, function: { name: "get_weather", parameters: weatherSchema } },
    ];
    const first = await openai.chat.completions.create({
      model: "modelx-5.4",
      messages: [{ role: "user", content: "Use get_weather." }],
      tools,
    });
    const message = first.choices[0]?.message;
    const call = message?.tool_calls?.[0];
    if (!message || call?.type !== "function") throw new Error("no tool call");
    expect(first.choices[0]?.finish_reason).toBe("tool_calls");
    const second = await openai.chat.completions.create({
      model: "modelx-5.4",
      tools,
      messages: [
        { role: "user", content: "Use get_weather." },
        message,
        { role: "tool", tool_call_id: call.id, content: '{"temp_c":21}' },
      ],
    });
    expect(second.choices[0]?.message.content).toContain("The tool returned");
  });

  test("parse with a zod response format", async () => {
    const parsed = await openai.chat.completions.parse({
      model: "modelx-5.4",
      messages: [{ role: "user", content: "Report." }],
      response_format: zodResponseFormat(Report, "report"),
    });
    expect(Report.safeParse(parsed.choices[0]?.message.parsed).success).toBe(true);
  });
});

describe("anthropic Messages", () => {
  test("create (x-api-key and Bearer), stream and messages.stream().finalMessage() agree", async () => {
    const params = {
      model: "modelz-sonnet-4-6",
      max_tokens: 200,
      messages: [{ role: "user" as const, content: "Say hi." }],
    };
    const made = await anthropic.messages.create(params);
    const text = made.content[0]?.type === "text" ? made.content[0].text : "";
    expect(text.length).toBeGreaterThan(10);
    const viaBearer = await bearer.messages.create(params);
    expect(viaBearer.content).toEqual(made.content);
    let streamed = "";
    for await (const event of await anthropic.messages.create({ ...params, stream: true })) {
      if (event.type === "content_block_delta" && event.delta.type === "text_delta")
        streamed += event.delta.text;
    }
    expect(streamed).toBe(text);
    const final = await anthropic.messages.stream(params).finalMessage();
    expect(final.content as unknown).toEqual(made.content);
    expect(final.usage.output_tokens).toBe(made.usage.output_tokens);
  });

  test("tool use and result round trip, with thinking", async () => {
    const tools = [
      {
        name: "get_weather",
        description: "Weather",
        input_schema: { ...weatherSchema, type: "object" as const },
      },
    ];
    const ask = { role: "user" as const, content: "Use get_weather." };
    const thinking = { type: "enabled" as const, budget_tokens: 1024 };
    const first = await anthropic.messages
      .stream({ model: "modelz-opus-4-7", max_tokens: 4000, thinking, tools, messages: [ask] })
      .finalMessage();
    expect(first.stop_reason).toBe("tool_use");
    expect(first.content[0]?.type).toBe("thinking");
    const use = first.content.find((b) => b.type === "tool_use");
    if (use?.type !== "tool_use") throw new Error("no tool_use");
    expect(Weather.safeParse(use.input).success).toBe(true);
    const second = await anthropic.messages.create({
      model: "modelz-opus-4-7",
      max_tokens: 4000,
      thinking,
      tools,
      messages: [
        ask,
        { role: "assistant", content: first.content },
        { role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: '{"temp_c":21}' }] },
      ],
    });
    const reply = second.content.find((b) => b.type === "text");
    expect(reply?.type === "text" ? reply.text : "").toContain("The tool returned");
  });

  test("count_tokens", async () => {
    const counted = await anthropic.messages.countTokens({
      model: "modelz-sonnet-4-6",
      messages: [{ role: "user", content: "Say hi." }],
    });
    expect(counted.input_tokens).toBeGreaterThan(0);
  });
});
