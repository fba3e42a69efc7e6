// What the relay hands the response cache (src/pipeline/relay/keep.ts): a stream's complete answer
// rebuilt from its events, and the rule that only whole answers are kept — not one cut by the
// output cap, not a refusal (a refusal part or a refusal stop), not one whose usage was estimated.
import { describe, expect, test } from "bun:test";
import { CollectingTap, endOf, storable } from "../../src/pipeline/relay/keep.ts";
import type { StreamTap } from "../../src/pipeline/relay/tap.ts";
import { readReply } from "../../src/protocols/translate.ts";

/** A tap that only counts, standing for the relay's usage tap. */
function innerTap(): StreamTap {
  let events = 0;
  return {
    protocol: "chat",
    get events() {
      return events;
    },
    created: undefined,
    complete: true,
    onEvent: () => {
      events++;
      return false;
    },
    finishReasons: () => [],
    usage: () => ({
      usage: {
        inputTokens: 5,
        cachedInputTokens: 0,
        cacheWriteTokens: 0,
        cacheWrite1hTokens: 0,
        outputTokens: 2,
        reasoningTokens: 0,
        generations: 0,
      },
      source: "reported",
    }),
  };
}

const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  JSON.stringify({
    id: "c1",
    object: "chat.completion.chunk",
    created: 1,
    model: "modelx-5.4",
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
const usageChunk = JSON.stringify({
  id: "c1",
  object: "chat.completion.chunk",
  created: 1,
  model: "modelx-5.4",
  choices: [],
  usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
});

function collect(events: string[]): ReturnType<CollectingTap["answer"]> {
  const tap = new CollectingTap(innerTap(), "gpt-4o", 5, { model: "gpt-4o" });
  for (const data of events) tap.onEvent(undefined, data);
  return tap.answer();
}

describe("a stream's answer, rebuilt", () => {
  test("a whole answer: its text, the client's model, kept", () => {
    const whole = collect([
      chunk({ role: "assistant", content: "Hel" }),
      chunk({ content: "lo" }),
      chunk({}, "stop"),
      usageChunk,
      "[DONE]",
    ]);
    expect(whole).toBeDefined();
    const json = JSON.parse(whole?.json ?? "{}") as {
      model: string;
      choices: { message: { content: string } }[];
    };
    expect(json.choices[0]?.message.content).toBe("Hello");
    expect(json.model).toBe("gpt-4o");
    expect(whole?.end).toEqual({ stop: "end", refused: false });
    expect(storable(whole?.end ?? { stop: "length", refused: true }, "reported")).toBe(true);
    expect(storable(whole?.end ?? { stop: "length", refused: true }, "estimated")).toBe(false);
  });

  test("cut by the output cap, a refusal, or never finished: not kept", () => {
    const cut = collect([
      chunk({ role: "assistant", content: "Hel" }),
      chunk({}, "length"),
      usageChunk,
      "[DONE]",
    ]);
    expect(storable(cut?.end ?? { stop: "end", refused: false }, "reported")).toBe(false);
    const refused = collect([
      chunk({ role: "assistant", refusal: "I can't help with that." }),
      chunk({}, "stop"),
      "[DONE]",
    ]);
    expect(refused?.end.refused).toBe(true);
    expect(storable(refused?.end ?? { stop: "end", refused: false }, "reported")).toBe(false);
    expect(collect([chunk({ role: "assistant", content: "Hel" })])).toBeUndefined();
  });

  test("a complete JSON answer with a refusal is not kept", () => {
    const reply = readReply("chat", {
      id: "c2",
      object: "chat.completion",
      created: 1,
      model: "modelx-5.4",
      choices: [
        { index: 0, message: { role: "assistant", content: null, refusal: "No." }, finish_reason: "stop" },
      ],
      usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
    });
    expect(storable(endOf(reply), "reported")).toBe(false);
  });
});
