// The prompt text of a request's head: every piece of text the model reads, joined by newlines with
// empty pieces skipped (the sizing and the simulator count it), from every kind of Chat message.
import { describe, expect, test } from "bun:test";
import { viewOfChat } from "../../src/protocols/translate.ts";
import { decodeChatRequest } from "../../src/wire/chat.ts";
import { joinText, toolsText } from "../../src/wire/translate/prompt-text.ts";

describe("prompt text", () => {
  test("joinText skips undefined and empty pieces and returns a lone piece as it is", () => {
    expect(joinText([])).toBe("");
    expect(joinText([undefined, "", "a"])).toBe("a");
    expect(joinText(["a", undefined, "b", "", "c"])).toBe("a\nb\nc");
    expect(toolsText([])).toBe("");
  });

  test("a Chat request's prompt text holds every message's text, tool calls and tool definitions", () => {
    const request = decodeChatRequest({
      model: "m",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: [{ type: "text", text: "Weather?" }, { type: "image_url" }] },
        {
          role: "assistant",
          content: null,
          tool_calls: [
            { id: "c1", type: "function", function: { name: "weather", arguments: '{"city":"Oslo"}' } },
          ],
        },
        { role: "tool", tool_call_id: "c1", content: "rain" },
        { role: "user", content: "" },
      ],
      tools: [
        {
          type: "function",
          function: { name: "weather", description: "Forecast", parameters: { type: "object" } },
        },
      ],
    });
    expect(viewOfChat(request).promptText).toBe(
      'Be brief.\nWeather?\nweather\n{"city":"Oslo"}\nrain\nweather\nForecast\n{"type":"object"}',
    );
    const plain = decodeChatRequest({ model: "m", messages: [{ role: "user", content: "hi" }] });
    expect(viewOfChat(plain).promptText).toBe("hi");
  });
});
