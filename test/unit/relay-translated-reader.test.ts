// A translated stream relayed as the gateway relays it (translateReader read by relayStream): the
// relay does not parse the translator's output, which counts the events it hands out itself, so a
// broken stream's failure events still continue the client's own numbering.
import { describe, expect, test } from "bun:test";
import { translateReader } from "../../src/pipeline/relay/translated.ts";
import { streamUsage } from "../../src/protocols/usage.ts";
import { relayToEnd } from "../helpers/relay.ts";

const encoder = new TextEncoder();

function chunk(delta: Record<string, unknown>, finish: string | null = null): string {
  const body = {
    id: "c1",
    object: "chat.completion.chunk",
    model: "m",
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
  return `data: ${JSON.stringify(body)}\n\n`;
}

/** A Chat upstream's events, one a chunk, read as the guarded body is. */
function upstream(events: string[]) {
  let i = 0;
  return {
    read: async () => {
      const next = events[i++];
      return next === undefined
        ? ({ done: true } as const)
        : ({ done: false, value: encoder.encode(next) } as const);
    },
    cancel: async () => undefined,
  };
}

async function relayed(events: string[]) {
  const t = { from: "chat", to: "responses", model: "m", inputEstimate: 3, request: { model: "m" } } as const;
  const { body, tap } = translateReader(t, upstream(events), streamUsage("chat"));
  const { text, outcome } = await relayToEnd({ body, tap });
  const payloads = text
    .split("\n\n")
    .filter((e) => e.includes("data: "))
    .map((e) => JSON.parse(e.slice(e.indexOf("data: ") + 6)) as { type: string; sequence_number: number });
  return { outcome, payloads, tap };
}

describe("a translated stream read straight through the translator", () => {
  test("a cut stream's error and response.failed continue the client's sequence numbers", async () => {
    const { outcome, payloads, tap } = await relayed([
      chunk({ role: "assistant", content: "" }),
      chunk({ content: "Hello" }),
      chunk({ content: " there" }),
    ]);
    expect(outcome).toBe("broken");
    expect(payloads.map((p) => p.sequence_number)).toEqual(payloads.map((_, i) => i));
    expect(payloads.at(-2)?.type).toBe("error");
    expect(payloads.at(-1)?.type).toBe("response.failed");
    // The tap counted what the client got before the gateway's own failure events.
    expect(tap.events).toBe(payloads.length - 2);
  });

  test("a whole stream completes, every event numbered in order", async () => {
    const { outcome, payloads, tap } = await relayed([
      chunk({ role: "assistant", content: "" }),
      chunk({ content: "Hi" }),
      chunk({}, "stop"),
      'data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}\n\n',
      "data: [DONE]\n\n",
    ]);
    expect(outcome).toBe("complete");
    expect(payloads.at(-1)?.type).toBe("response.completed");
    expect(payloads.map((p) => p.sequence_number)).toEqual(payloads.map((_, i) => i));
    expect(tap.events).toBe(payloads.length);
  });
});
