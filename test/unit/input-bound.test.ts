// The input bound of the reservation (src/pipeline/input-bound.ts, image-tokens.ts): the
// providers' published image examples, the sizes read from inline data, the overheads added per
// message, name and tool, and the refusals that name their field.
import { describe, expect, test } from "bun:test";
import { anthropicImageTokens, openaiImageTokens, urlImageSize } from "../../src/pipeline/image-tokens.ts";
import { boundOf, OVERHEAD } from "../../src/pipeline/input-bound.ts";
import { GatewayError } from "../../src/wire/errors.ts";
import { pngDataUrl } from "../helpers/provider-billing.ts";

describe("image tokens", () => {
  test("OpenAI's published examples: low 85, 1024² high 765, 2048×4096 high 1105; unknown size at 8 tiles", () => {
    expect(openaiImageTokens("low", { width: 4096, height: 8192 })).toBe(85);
    expect(openaiImageTokens("high", { width: 1024, height: 1024 })).toBe(765);
    expect(openaiImageTokens(undefined, { width: 2048, height: 4096 })).toBe(1105);
    expect(openaiImageTokens("auto", undefined)).toBe(85 + 170 * 8);
    expect(openaiImageTokens("original", undefined)).toBeUndefined();
    expect(openaiImageTokens("original", { width: 1024, height: 1024 })).toBe(1024);
  });

  test("Anthropic: width × height / 750 (or 28-pixel patches, the larger), capped per model", () => {
    expect(anthropicImageTokens("modelz-sonnet-4-6", { width: 1000, height: 1000 })).toBe(1334);
    expect(anthropicImageTokens("modelz-sonnet-4-6", { width: 200, height: 200 })).toBe(64);
    expect(anthropicImageTokens("modelz-sonnet-4-6", { width: 8000, height: 8000 })).toBe(1600);
    expect(anthropicImageTokens("modelz-sonnet-4-6", undefined)).toBe(1600);
    expect(anthropicImageTokens("modelz-opus-4-7", undefined)).toBe(5000);
  });

  test("sizes are read from inline PNG data; URLs have none", () => {
    expect(urlImageSize(pngDataUrl(640, 480))).toEqual({ width: 640, height: 480 });
    expect(urlImageSize("https://example.com/a.png")).toBeUndefined();
    expect(urlImageSize("data:image/png;base64,AAAA")).toBeUndefined();
  });
});

describe("the bound of a body", () => {
  test("a plain chat adds only the framing of each message and the reply", () => {
    const body = {
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: "yo" },
      ],
    };
    expect(boundOf("chat", body, "modelx-5.4")).toBe(2 * OVERHEAD.perMessage + OVERHEAD.reply);
  });

  test("50 image parts are 50 images; the text, counted by the caller, is not counted again", () => {
    const parts = Array.from({ length: 50 }, () => ({
      type: "image_url",
      image_url: { url: pngDataUrl(1024, 1024), detail: "low" },
    }));
    const body = { messages: [{ role: "user", content: parts }] };
    expect(boundOf("chat", body, "modelx-5.4")).toBe(50 * 85 + OVERHEAD.perMessage + OVERHEAD.reply);
    const text = { messages: [{ role: "user", content: "hello world" }] };
    expect(boundOf("chat", text, "m")).toBe(OVERHEAD.perMessage + OVERHEAD.reply);
  });

  test("tools: per-tool overhead and per schema node; Anthropic adds its tool-use prompt; hosted tools an allowance", () => {
    const schema = { type: "object", properties: { a: { type: "string", enum: ["x", "y"] } } };
    const chat = { messages: [], tools: [{ type: "function", function: { name: "f", parameters: schema } }] };
    expect(boundOf("chat", chat, "m")).toBe(OVERHEAD.reply + OVERHEAD.perTool + 3 * OVERHEAD.perSchemaNode);
    const messages = { messages: [], tools: [{ name: "f", input_schema: schema }] };
    expect(boundOf("messages", messages, "m")).toBe(
      OVERHEAD.reply + OVERHEAD.anthropicToolPrompt + OVERHEAD.perTool + 3 * OVERHEAD.perSchemaNode,
    );
    const hosted = boundOf("responses", { input: [], tools: [{ type: "web_search" }] }, "m");
    expect(hosted).toBeGreaterThan(OVERHEAD.reply + OVERHEAD.typedTool);
  });

  const refused: [string, Parameters<typeof boundOf>[0], Record<string, unknown>][] = [
    ["messages[0].content[0]", "chat", { messages: [{ role: "user", content: [{ type: "input_audio" }] }] }],
    ["tools[0]", "responses", { input: "x", tools: [{ type: "mcp", server_url: "https://x" }] }],
    ["mcp_servers", "messages", { messages: [], mcp_servers: [{ url: "https://x" }] }],
  ];
  for (const [param, protocol, body] of refused) {
    test(`refused with 400 naming ${param}`, () => {
      let thrown: unknown;
      try {
        boundOf(protocol, body, "m");
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(GatewayError);
      expect((thrown as GatewayError).param).toBe(param);
    });
  }

  const contextual: [string, Parameters<typeof boundOf>[0], Record<string, unknown>][] = [
    ["an input_file", "responses", { input: [{ role: "user", content: [{ type: "input_file" }] }] }],
    ["an item_reference", "responses", { input: ["x", { type: "item_reference", id: "i" }] }],
    ["a conversation", "responses", { input: "x", conversation: "conv_1" }],
    ["previous_response_id", "responses", { input: "x", previous_response_id: "resp_1" }],
    [
      "detail original by URL",
      "chat",
      {
        messages: [
          {
            role: "user",
            content: [{ type: "image_url", image_url: { url: "https://x/a.png", detail: "original" } }],
          },
        ],
      },
    ],
  ];
  for (const [what, protocol, body] of contextual) {
    test(`${what} has no bound but the context window`, () => {
      expect(boundOf(protocol, body, "m")).toBe(Number.POSITIVE_INFINITY);
    });
  }

  test("a plain-text document is bounded by its text, a PDF only by the context window", () => {
    const text = {
      type: "document",
      source: { type: "text", media_type: "text/plain", data: "hello world" },
    };
    expect(boundOf("messages", { messages: [{ role: "user", content: [text] }] }, "m")).toBe(
      OVERHEAD.reply + OVERHEAD.perMessage + 2,
    );
    const pdf = { type: "document", source: { type: "base64", media_type: "application/pdf", data: "JVBE" } };
    expect(boundOf("messages", { messages: [{ role: "user", content: [pdf] }] }, "m")).toBe(
      Number.POSITIVE_INFINITY,
    );
  });
});
