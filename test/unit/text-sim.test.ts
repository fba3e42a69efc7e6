// Unit tests of the simulator's pure parts: schema-valid JSON, the tool-call rule, determinism,
// directives, and SSE event-boundary detection used by the relay.
import { describe, expect, test } from "bun:test";
import Ajv from "ajv";
import { Rng } from "../../src/sim/random.ts";
import { readDirectives } from "../../src/sim/text/directives.ts";
import { jsonForSchema } from "../../src/sim/text/json.ts";
import { planAnswer } from "../../src/sim/text/plan.ts";
import { EventSplitter } from "../../src/wire/sse.ts";
import type { TextView } from "../../src/wire/text-form.ts";

const ajv = new Ajv({ strict: false });
const SCHEMAS: Record<string, unknown>[] = [
  { type: "object", properties: { a: { type: "integer", minimum: 3, maximum: 3 } }, required: ["a"] },
  { type: "array", items: { enum: ["x", "y"] }, minItems: 4, maxItems: 4 },
  { type: "number", exclusiveMinimum: 0, exclusiveMaximum: 1 },
  { type: "string", minLength: 30, maxLength: 35 },
  { type: ["string", "null"], format: "email" },
  { type: "integer", multipleOf: 7, minimum: 10, maximum: 30 },
  {
    type: "object",
    $defs: {
      node: {
        type: "object",
        properties: { name: { type: "string" }, kids: { type: "array", items: { $ref: "#/$defs/node" } } },
        required: ["name"],
      },
    },
    properties: { root: { $ref: "#/$defs/node" }, pick: { anyOf: [{ type: "boolean" }, { type: "null" }] } },
    required: ["root", "pick"],
    additionalProperties: false,
  },
  {
    allOf: [
      { type: "object", properties: { a: { const: 1 } }, required: ["a"] },
      { properties: { b: { type: "string" } }, required: ["b"] },
    ],
  },
];

function view(over: Partial<TextView>): TextView {
  return {
    protocol: "chat",
    model: "m",
    stream: false,
    promptText: "hello",
    lastUserText: "hello",
    toolResult: undefined,
    tools: [],
    toolChoice: { mode: "auto" },
    outputFormat: undefined,
    maxOutputTokens: undefined,
    reasoning: undefined,
    includeUsage: false,
    ...over,
  };
}

const TOOLS = [
  { name: "alpha", parameters: { type: "object", properties: { q: { type: "string" } }, required: ["q"] } },
  { name: "beta", parameters: undefined },
];

describe("schema-valid JSON", () => {
  test.each(SCHEMAS.map((s, i) => [i, s] as const))("schema %d: 20 seeds all validate", (_i, schema) => {
    for (let seed = 0; seed < 20; seed++)
      expect(ajv.validate(schema, jsonForSchema(schema, new Rng(seed)))).toBe(true);
  });
});

describe("tool-call rule", () => {
  test("auto calls a tool only when the last user message names it", () => {
    expect(planAnswer(view({ tools: TOOLS, lastUserText: "please use beta" }), 1).toolCall?.name).toBe(
      "beta",
    );
    expect(planAnswer(view({ tools: TOOLS, lastUserText: "nothing here" }), 1).toolCall).toBeUndefined();
  });
  test("required picks the named-in-text tool else the first; a named choice wins; none never calls", () => {
    expect(planAnswer(view({ tools: TOOLS, toolChoice: { mode: "required" } }), 1).toolCall?.name).toBe(
      "alpha",
    );
    expect(
      planAnswer(view({ tools: TOOLS, toolChoice: { mode: "named", name: "beta" } }), 1).toolCall?.name,
    ).toBe("beta");
    expect(
      planAnswer(view({ tools: TOOLS, toolChoice: { mode: "none" }, lastUserText: "alpha" }), 1).toolCall,
    ).toBeUndefined();
  });
  test("after a tool result the answer is text; arguments validate against the tool schema", () => {
    const after = planAnswer(
      view({ tools: TOOLS, lastUserText: "alpha", toolResult: "sunny, 21 degrees" }),
      1,
    );
    expect(after.toolCall).toBeUndefined();
    expect(after.text.join("")).toContain("The tool returned");
    const call = planAnswer(view({ tools: TOOLS, lastUserText: "alpha" }), 1).toolCall;
    expect(ajv.validate(TOOLS[0]?.parameters ?? {}, JSON.parse(call?.arguments ?? "null"))).toBe(true);
    expect(planAnswer(view({ tools: TOOLS, lastUserText: "alpha" }), 1).stop).toBe("tool");
  });
});

describe("plans", () => {
  test("deterministic per seed and request; the seed changes the text", () => {
    const a = planAnswer(view({}), 5).text.join("");
    expect(planAnswer(view({}), 5).text.join("")).toBe(a);
    expect(planAnswer(view({}), 6).text.join("")).not.toBe(a);
  });
  test("reasoning tokens by effort count inside the output cap", () => {
    const plan = planAnswer(
      view({ reasoning: { effort: "high", budgetTokens: undefined, summary: false } }),
      1,
    );
    expect(plan.reasoningTokens).toBe(160);
    expect(plan.outputTokens).toBe(160 + plan.text.length);
    const capped = planAnswer(
      view({ maxOutputTokens: 100, reasoning: { effort: "high", budgetTokens: undefined, summary: false } }),
      1,
    );
    expect(capped.reasoningTokens).toBe(100);
    expect(capped.text.length).toBe(0);
    expect(capped.stop).toBe("length");
  });
  test("directives are read from the last user text", () => {
    expect(readDirectives("x sim:error=429 sim:drop=3 sim:ttft=250 sim:tps=40")).toEqual({
      errorStatus: 429,
      dropAfter: 3,
      ttftMs: 250,
      tokensPerSecond: 40,
    });
    expect(readDirectives("sim:error=418").errorStatus).toBeUndefined();
  });
});

describe("SSE boundaries", () => {
  const bytes = (s: string) => new TextEncoder().encode(s);
  test("finds the end of the last complete event, across chunks and CRLF", () => {
    expect(new EventSplitter().scan(bytes("data: a\n\ndata: b"), [])).toEqual([9]);
    expect(new EventSplitter().scan(bytes("data: a\r\n\r\n"), [])).toEqual([11]);
    const split = new EventSplitter();
    expect(split.scan(bytes("data: a\n"), [])).toEqual([]);
    expect(split.scan(bytes("\ndata: b"), [])).toEqual([1]);
    expect(new EventSplitter().scan(bytes("data: partial"), [])).toEqual([]);
  });
});
