// The official TypeScript SDKs through translated paths: each SDK's stream helper and parse
// helper on a model whose channel speaks another protocol (Responses client → Anthropic upstream,
// Chat client → Responses and Anthropic upstreams, Messages client → Responses and Chat
// upstreams), with no SDK parse errors or warnings, tool calls included.
import { afterAll, beforeAll, describe, expect, spyOn, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { zodResponseFormat, zodTextFormat } from "openai/helpers/zod";
import { z } from "zod";
import { MODEL_BY_UPSTREAM, startTranslateRig, type TranslateRig } from "../integration/translate-setup.ts";

let rig: TranslateRig;
let openai: OpenAI;
let anthropic: Anthropic;
const warn = spyOn(console, "warn");
const error = spyOn(console, "error");

beforeAll(async () => {
  rig = await startTranslateRig();
  const key = rig.gw.key ?? "";
  openai = new OpenAI({ apiKey: key, baseURL: `${rig.gw.url}/v1`, maxRetries: 0 });
  anthropic = new Anthropic({ authToken: key, apiKey: null, baseURL: rig.gw.url, maxRetries: 0 });
}, 30_000);
afterAll(async () => {
  await rig?.stop();
  expect(warn).not.toHaveBeenCalled();
  expect(error).not.toHaveBeenCalled();
}, 30_000);

const Report = z.object({ title: z.string(), tags: z.array(z.string()) });
const weather = {
  type: "object",
  properties: { city: { type: "string" } },
  required: ["city"],
  additionalProperties: false,
};

describe("openai Responses → Anthropic upstream", () => {
  const model = MODEL_BY_UPSTREAM.messages;
  test("stream helper: deltas equal the final text, reasoning item carries encrypted_content", async () => {
    const helper = openai.responses.stream({
      model,
      input: "Think, then answer.",
      reasoning: { effort: "low", summary: "auto" },
    });
    let deltas = "";
    helper.on("response.output_text.delta", (e) => {
      deltas += e.delta;
    });
    const final = await helper.finalResponse();
    expect(final.status).toBe("completed");
    expect(deltas).toBe(final.output_text);
    const reasoning = final.output.find((i) => i.type === "reasoning");
    expect(reasoning?.type === "reasoning" && typeof reasoning.encrypted_content === "string").toBe(true);
  });

  test("parse with a text format, and a streamed tool call", async () => {
    const parsed = await openai.responses.parse({
      model,
      input: "Report.",
      text: { format: zodTextFormat(Report, "report") },
    });
    expect(Report.safeParse(parsed.output_parsed).success).toBe(true);
    const stream = openai.responses.stream({
      model,
      input: "Use get_weather.",
      tools: [{ type: "function", name: "get_weather", parameters: weather, strict: true }],
    });
    const final = await stream.finalResponse();
    const call = final.output.find((i) => i.type === "function_call");
    expect(call?.type === "function_call" && JSON.parse(call.arguments).city).toBeString();
  });
});

describe.each([
  { label: "Responses upstream", model: MODEL_BY_UPSTREAM.responses },
  { label: "Anthropic upstream", model: MODEL_BY_UPSTREAM.messages },
])("openai Chat → $label", ({ model }) => {
  test("stream helper and parse helper", async () => {
    const made = await openai.chat.completions.create({
      model,
      messages: [{ role: "user", content: "Say hi." }],
    });
    const stream = openai.chat.completions.stream({
      model,
      messages: [{ role: "user", content: "Say hi." }],
      stream_options: { include_usage: true },
    });
    let deltas = "";
    stream.on("content.delta", (e) => {
      deltas += e.delta;
    });
    const final = await stream.finalChatCompletion();
    expect(deltas).toBe(made.choices[0]?.message.content ?? "");
    expect(final.usage?.total_tokens).toBe(made.usage?.total_tokens);
    const parsed = await openai.chat.completions.parse({
      model,
      messages: [{ role: "user", content: "Report." }],
      response_format: zodResponseFormat(Report, "report"),
    });
    expect(Report.safeParse(parsed.choices[0]?.message.parsed).success).toBe(true);
  });

  test("streamed tool call through the helper", async () => {
    const stream = openai.chat.completions.stream({
      model,
      messages: [{ role: "user", content: "Use get_weather." }],
      tools: [{ type: "function", function: { name: "get_weather", parameters: weather } }],
    });
    const final = await stream.finalChatCompletion();
    const call = final.choices[0]?.message.tool_calls?.[0];
    expect(final.choices[0]?.finish_reason).toBe("tool_calls");
    expect(call?.type === "function" && JSON.parse(call.function.arguments).city).toBeString();
  });
});

describe.each([
  { label: "Responses upstream", model: MODEL_BY_UPSTREAM.responses },
  { label: "Chat upstream", model: MODEL_BY_UPSTREAM.chat },
])("@anthropic-ai/sdk Messages → $label", ({ model }) => {
  test("stream helper: text events, final message and usage", async () => {
    const made = await anthropic.messages.create({
      model,
      max_tokens: 2048,
      messages: [{ role: "user", content: "Say hi." }],
    });
    const stream = anthropic.messages.stream({
      model,
      max_tokens: 2048,
      messages: [{ role: "user", content: "Say hi." }],
    });
    let deltas = "";
    stream.on("text", (t) => {
      deltas += t;
    });
    const final = await stream.finalMessage();
    const text = made.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("");
    expect(deltas).toBe(text);
    expect(final.stop_reason).toBe("end_turn");
    expect(final.usage.input_tokens).toBe(made.usage.input_tokens);
    expect(final.usage.output_tokens).toBe(made.usage.output_tokens);
  });

  test("streamed tool_use with thinking, then the tool result", async () => {
    const tools = [{ name: "get_weather", input_schema: weather as Anthropic.Tool.InputSchema }];
    const ask = { role: "user" as const, content: "Use get_weather." };
    const stream = anthropic.messages.stream({
      model,
      max_tokens: 4096,
      thinking: { type: "enabled", budget_tokens: 1024 },
      tools,
      messages: [ask],
    });
    const final = await stream.finalMessage();
    expect(final.stop_reason).toBe("tool_use");
    const use = final.content.find((b) => b.type === "tool_use");
    if (use?.type !== "tool_use") throw new Error("no tool_use");
    expect(typeof (use.input as { city?: unknown }).city).toBe("string");
    const next = await anthropic.messages.create({
      model,
      max_tokens: 4096,
      thinking: { type: "enabled", budget_tokens: 1024 },
      tools,
      messages: [
        ask,
        { role: "assistant", content: final.content },
        { role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: "sunny" }] },
      ],
    });
    expect(next.stop_reason).toBe("end_turn");
  });
});
