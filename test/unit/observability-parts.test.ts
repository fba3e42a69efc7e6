// Pure parts of observability: span attributes (finish reasons per protocol, prompt text only when
// captured), the capped key label, CSV fields of the usage export.
import { describe, expect, test } from "bun:test";
import { csvField, toCsv } from "../../src/cli/usage-groups.ts";
import { BoundedLabel, OTHER } from "../../src/metrics/labels.ts";
import { UsageTap } from "../../src/pipeline/relay/tap.ts";
import { streamUsage } from "../../src/protocols/usage.ts";
import { finishReasons, requestAttributes, responseModel } from "../../src/telemetry/attributes.ts";
import type { TextView } from "../../src/wire/text-form.ts";

const view: TextView = {
  protocol: "chat",
  model: "modelx-5.5",
  stream: false,
  promptText: "tell me about otters",
  lastUserText: "tell me about otters",
  toolResult: undefined,
  tools: [],
  toolChoice: { mode: "auto" },
  outputFormat: undefined,
  maxOutputTokens: 100,
  reasoning: undefined,
  includeUsage: false,
};

describe("span attributes", () => {
  test("finish reasons of each protocol's complete answer", () => {
    expect(
      finishReasons("chat", { choices: [{ finish_reason: "stop" }, { finish_reason: "length" }] }),
    ).toEqual(["stop", "length"]);
    expect(finishReasons("messages", { stop_reason: "end_turn" })).toEqual(["end_turn"]);
    expect(finishReasons("responses", { status: "completed" })).toEqual(["completed"]);
    expect(
      finishReasons("responses", {
        status: "incomplete",
        incomplete_details: { reason: "max_output_tokens" },
      }),
    ).toEqual(["max_output_tokens"]);
    expect(finishReasons("chat", "not json")).toEqual([]);
    expect(responseModel({ model: "m-1" })).toBe("m-1");
    expect(responseModel([])).toBeUndefined();
  });

  test("the prompt goes into a span only when capture_content is on", () => {
    const off = requestAttributes(view, false);
    expect(JSON.stringify(off)).not.toContain("otters");
    expect(off).toMatchObject({ "gen_ai.operation.name": "chat", "gen_ai.request.max_tokens": 100 });
    const on = requestAttributes(view, true);
    const messages = JSON.parse(String(on["gen_ai.input.messages"])) as { parts: { content: string }[] }[];
    expect(messages[0]?.parts[0]?.content).toBe("tell me about otters");
  });
});

describe("stream finish reasons from the usage tap", () => {
  test("Chat: the finish chunk, even when the usage chunk follows it", () => {
    const tap = new UsageTap("chat", streamUsage("chat"));
    tap.onEvent(undefined, '{"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}');
    tap.onEvent(undefined, '{"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}');
    tap.onEvent(
      undefined,
      '{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}',
    );
    expect(tap.finishReasons()).toEqual(["length"]);
  });

  test("Messages: message_delta's stop_reason; Responses: the incomplete reason or the status", () => {
    const messages = new UsageTap("messages", streamUsage("messages"));
    messages.onEvent(
      "message_delta",
      '{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":3}}',
    );
    expect(messages.finishReasons()).toEqual(["tool_use"]);
    const responses = new UsageTap("responses", streamUsage("responses"));
    responses.onEvent(
      "response.incomplete",
      '{"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"}}}',
    );
    expect(responses.finishReasons()).toEqual(["max_output_tokens"]);
    const done = new UsageTap("responses", streamUsage("responses"));
    done.onEvent("response.completed", '{"type":"response.completed","response":{"status":"completed"}}');
    expect(done.finishReasons()).toEqual(["completed"]);
    expect(new UsageTap("messages", streamUsage("messages")).finishReasons()).toEqual([]);
  });
});

describe("BoundedLabel", () => {
  test("keeps the first cap values, folds later ones into other, remembers the kept ones", () => {
    const label = new BoundedLabel(2);
    expect([label.of("a"), label.of("b"), label.of("c"), label.of("a"), label.of("d")]).toEqual([
      "a",
      "b",
      OTHER,
      "a",
      OTHER,
    ]);
    expect(new BoundedLabel(0).of("a")).toBe(OTHER);
  });
});

describe("CSV", () => {
  test("fields with commas, quotes or line breaks are quoted; lines end in CRLF", () => {
    expect(csvField("acme, inc")).toBe('"acme, inc"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField(null)).toBe("");
    expect(toCsv([{ a: 1, b: "x,y" }], ["a", "b"])).toBe('a,b\r\n1,"x,y"\r\n');
  });

  test("text a spreadsheet would run as a formula is prefixed with a quote; numbers stay numbers", () => {
    expect(csvField('=HYPERLINK("http://x")')).toBe('"\'=HYPERLINK(""http://x"")"');
    expect(csvField("+cmd|' /C calc'!A0")).toBe("'+cmd|' /C calc'!A0");
    expect(csvField("-2+3")).toBe("'-2+3");
    expect(csvField("@SUM(A1:A2)")).toBe("'@SUM(A1:A2)");
    expect(csvField("\tkey")).toBe('"\'\tkey"');
    expect(csvField("\rkey")).toBe('"\'\rkey"');
    expect(csvField(-1.5)).toBe("-1.5");
    expect(csvField("-42")).toBe("-42");
    expect(csvField("+7")).toBe("+7");
    expect(csvField("modelx-5.5")).toBe("modelx-5.5");
    // After a separator another locale splits on (OWASP: escape every cell that could start a formula).
    expect(csvField("x;=1+1")).toBe('"x;\'=1+1"');
    expect(csvField("a,@b;c")).toBe('"a,\'@b;c"');
    expect(csvField("x\n-1")).toBe('"x\n\'-1"');
    const rows = [{ key: "=1+1", model: "@evil", cost: -0.25 }];
    expect(toCsv(rows, ["key", "model", "cost"])).toBe("key,model,cost\r\n'=1+1,'@evil,-0.25\r\n");
  });
});
