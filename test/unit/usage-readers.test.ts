// The stream usage readers of every protocol (src/protocols/<name>/usage.ts) and the tap's reading
// of them (src/pipeline/relay/tap.ts): a figure an upstream sends before its final usage is a floor,
// the final usage is billed as it is, a stream cut before it is billed its delivered text counted by
// the tokenizer (capped by the reservation), and the deltas kept for that count are read in
// batches on a long stream without changing the text.
import { describe, expect, test } from "bun:test";
import { countTokens } from "../../src/catalog/tokenizer.ts";
import { readUsage } from "../../src/pipeline/relay/tap.ts";
import { streamUsage } from "../../src/protocols/usage.ts";
import { KEPT_CHARS } from "../../src/protocols/usage-reader.ts";
import { type Protocol, type Script, scriptedEvents } from "../helpers/scripted-streams.ts";

/** Feeds a script's events to a fresh reader of `protocol`, as the relay's SSE parse hands them over. */
function read(protocol: Protocol, script: Script) {
  const reader = streamUsage(protocol);
  for (const raw of scriptedEvents(protocol, script)) {
    const name = /^event: (.+)$/m.exec(raw)?.[1];
    const data = /^data: (.*)$/m.exec(raw)?.[1] ?? "";
    reader.onEvent(name, data);
  }
  return reader;
}

const PROTOCOLS: readonly Protocol[] = ["chat", "responses", "messages"];
const WORDS = [" alpha", " beta", " gamma", " delta", "\n", " 世界", " 🌍", '{"k":'];

describe("every reader", () => {
  for (const protocol of PROTOCOLS) {
    for (const thinking of [false, true]) {
      const pieces = Array.from({ length: 200 }, (_, i) => WORDS[i % WORDS.length] as string);
      const base = { pieces, thinking, input: 40, output: 9 };

      test(`${protocol}${thinking ? " (reasoning)" : ""}: the final usage is billed as reported`, () => {
        const reader = read(protocol, { ...base, end: "complete" });
        expect(reader.final).toBe(true);
        expect(readUsage(reader, 3, 4000)).toMatchObject({
          source: "reported",
          usage: { inputTokens: 40, outputTokens: 9 },
        });
      });

      test(`${protocol}${thinking ? " (reasoning)" : ""}: a cut stream bills its delivered text, counted`, () => {
        const reader = read(protocol, { ...base, cutAt: 150, end: "drop" });
        expect(reader.final).toBe(false);
        expect(reader.delivered()).toBe(pieces.slice(0, 150).join(""));
        const { usage, source } = readUsage(reader, 3, 4000);
        expect(source).toBe("counted");
        expect(usage.outputTokens).toBe(countTokens(pieces.slice(0, 150).join("")));
        // Messages' message_start input is final for input; the others sent none: the prompt count.
        expect(usage.inputTokens).toBe(protocol === "messages" ? 40 : 3);
        // Never above what the reservation covers.
        expect(readUsage(reader, 3, 10).usage.outputTokens).toBe(10);
      });
    }
  }
});

describe("provisional figures are floors", () => {
  test("Messages: message_start's output_tokens is a floor, never the bill", () => {
    const reader = streamUsage("messages");
    const start = { message: { usage: { input_tokens: 12, output_tokens: 1 } } };
    reader.onEvent("message_start", JSON.stringify({ type: "message_start", ...start }));
    // Nothing delivered: the provisional figure stands, counted (not reported).
    expect(readUsage(reader, 3, 4000)).toMatchObject({
      source: "counted",
      usage: { inputTokens: 12, outputTokens: 1 },
    });
    const delta = { index: 0, delta: { type: "text_delta", text: " one two three four five" } };
    reader.onEvent("content_block_delta", JSON.stringify({ type: "content_block_delta", ...delta }));
    expect(readUsage(reader, 3, 4000).usage.outputTokens).toBe(5);
  });

  test("Chat: a running usage (vLLM) is a floor until the finish chunk", () => {
    const reader = streamUsage("chat");
    const chunk = (delta: object, usage: object, finish: string | null = null) =>
      JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }], usage });
    const running = (n: number) => ({ prompt_tokens: 7, completion_tokens: n, total_tokens: 7 + n });
    reader.onEvent(undefined, chunk({ content: " hello" }, running(30)));
    reader.onEvent(undefined, chunk({ content: " world" }, running(31)));
    expect(reader.final).toBe(false);
    // The running count is above what was seen (two words): it stands as the floor.
    expect(readUsage(reader, 3, 4000)).toMatchObject({
      source: "counted",
      usage: { inputTokens: 7, outputTokens: 31 },
    });
    reader.onEvent(undefined, chunk({}, running(32), "stop"));
    expect(readUsage(reader, 3, 4000)).toMatchObject({ source: "reported", usage: { outputTokens: 32 } });
  });

  test("Chat: a usage chunk then [DONE] is final; [DONE] without any usage is counted", () => {
    const bare = streamUsage("chat");
    bare.onEvent(undefined, JSON.stringify({ choices: [{ index: 0, delta: { content: " a b c" } }] }));
    bare.onEvent(undefined, "[DONE]");
    expect(readUsage(bare, 3, 4000)).toMatchObject({ source: "counted", usage: { outputTokens: 3 } });
  });
});

test("a long stream's kept deltas are read in batches, its text unchanged", () => {
  const piece = " lorem ipsum dolor sit amet, consectetur adipiscing elit";
  const count = Math.ceil((3 * KEPT_CHARS) / 80);
  for (const protocol of PROTOCOLS) {
    const pieces = Array.from({ length: count }, (_, i) => `${piece} ${i}`);
    const reader = read(protocol, { pieces, thinking: false, end: "drop", input: 1, output: 0 });
    expect(reader.deltas).toBeGreaterThanOrEqual(count);
    expect(reader.delivered()).toBe(pieces.join(""));
  }
});
