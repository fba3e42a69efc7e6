// The request writers against the strict outgoing contracts for generated conversations
// (fast-check): any internal request a client protocol can produce — system prompts, user text
// and images, assistant text, signed thinking, tool rounds with image results, mid-conversation
// system messages, every tool_choice, formats, caps, sampling, reasoning, cache keys — written for
// each upstream protocol passes that protocol's contract. Plus the schema and system-merge helpers.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { writeRequest } from "../../src/protocols/translate.ts";
import { systemOverrides } from "../../src/wire/messages.ts";
import type { IrFormat, IrMessage, IrPart, IrRequest } from "../../src/wire/text-form.ts";
import { anthropicSchema, isStrictCompatible } from "../../src/wire/translate/json-schema.ts";
import { ChatRequestContract } from "./chat-request.ts";
import { problems } from "./client-schemas.ts";
import { MessagesRequestContract, thinkingFormProblem } from "./messages-request.ts";
import { LOOSE_SCHEMA, STRICT_SCHEMA } from "./request-scenarios.ts";
import { ResponsesRequestContract } from "./responses-request.ts";
import { anthropicFormatViolation } from "./schema-rules.ts";

const word = fc.constantFrom("harbour", "tide", "JSON", "lighthouse", "gull", "anchor", "fog");
const text = fc.array(word, { minLength: 1, maxLength: 4 }).map((w) => w.join(" "));
const image = fc.constantFrom("data:image/png;base64,iVBORw0KGgo=", "https://example.com/a.jpg");

type Round =
  | { kind: "user"; text: string; image: string | undefined }
  | { kind: "assistant"; text: string; thinking: number }
  | { kind: "tools"; calls: number; thinking: number; text: string | undefined; resultImage: boolean }
  | { kind: "system"; text: string };

const round: fc.Arbitrary<Round> = fc.oneof(
  fc.record({ kind: fc.constant("user" as const), text, image: fc.option(image, { nil: undefined }) }),
  fc.record({ kind: fc.constant("assistant" as const), text, thinking: fc.integer({ min: 0, max: 3 }) }),
  fc.record({
    kind: fc.constant("tools" as const),
    calls: fc.integer({ min: 1, max: 2 }),
    thinking: fc.integer({ min: 0, max: 3 }),
    text: fc.option(text, { nil: undefined }),
    resultImage: fc.boolean(),
  }),
  fc.record({ kind: fc.constant("system" as const), text }),
);

/** Thinking an assistant turn may carry: none, signed from a Responses item, unsigned, redacted. */
const THINKING: IrPart[][] = [
  [],
  [{ type: "thinking", text: "hmm", signature: "sig", id: "rs_1" }],
  [{ type: "thinking", text: "hmm", signature: undefined }],
  [{ type: "redacted_thinking", data: "opaque" }],
];

function push(messages: IrMessage[], role: IrMessage["role"], parts: IrPart[]): void {
  const last = messages.at(-1);
  if (last !== undefined && last.role === role && role !== "system") last.parts.push(...parts);
  else messages.push({ role, parts });
}

/** A conversation: starts and ends with the user (a question or tool results), as clients send. */
function conversation(rounds: Round[], first: string): IrMessage[] {
  const messages: IrMessage[] = [{ role: "user", parts: [{ type: "text", text: first }] }];
  let call = 0;
  for (const r of rounds) {
    if (r.kind === "user") {
      push(messages, "user", [
        { type: "text", text: r.text },
        ...(r.image ? [{ type: "image" as const, url: r.image }] : []),
      ]);
    } else if (r.kind === "system") push(messages, "system", [{ type: "text", text: r.text }]);
    else {
      const thinking = THINKING[r.thinking] ?? [];
      if (r.kind === "assistant") {
        push(messages, "assistant", [...thinking, { type: "text", text: r.text }]);
        continue;
      }
      const ids = Array.from({ length: r.calls }, () => `call_${++call}`);
      push(messages, "assistant", [
        ...thinking,
        ...(r.text ? [{ type: "text" as const, text: r.text }] : []),
        ...ids.map((id) => ({
          type: "tool_call" as const,
          id,
          name: "get_weather",
          arguments: '{"city":"Oslo"}',
        })),
      ]);
      push(
        messages,
        "user",
        ids.map((callId) => ({
          type: "tool_result" as const,
          callId,
          content: r.resultImage
            ? [
                { type: "text" as const, text: "radar" },
                { type: "image" as const, url: "https://example.com/r.png" },
              ]
            : "sunny",
          isError: false,
        })),
      );
    }
  }
  if (messages.at(-1)?.role !== "user") push(messages, "user", [{ type: "text", text: "And now?" }]);
  return messages;
}

const format: fc.Arbitrary<IrFormat | undefined> = fc.constantFrom<IrFormat | undefined>(
  undefined,
  { kind: "json_object" },
  { kind: "json_schema", name: "weather", schema: LOOSE_SCHEMA, strict: undefined },
  { kind: "json_schema", name: "weather", schema: STRICT_SCHEMA, strict: true },
  { kind: "json_schema", name: "weather", schema: STRICT_SCHEMA, strict: undefined },
  { kind: "json_schema", name: "free", schema: { type: "object" }, strict: false },
);

const request: fc.Arbitrary<IrRequest> = fc
  .record({
    model: fc.constantFrom("modelz-opus-4-7", "modelz-sonnet-4-6", "modelz-haiku-4-5-20251001", "modelx-5.4"),
    system: fc.array(text, { maxLength: 2 }),
    rounds: fc.array(round, { maxLength: 6 }),
    first: text,
    withTools: fc.boolean(),
    parameters: fc.constantFrom<Record<string, unknown>>(
      LOOSE_SCHEMA,
      {},
      { properties: { city: { type: "string" } } },
    ),
    toolChoice: fc.constantFrom("auto", "none", "required", "named"),
    parallelToolCalls: fc.option(fc.boolean(), { nil: undefined }),
    format,
    maxTokens: fc.option(fc.integer({ min: 1, max: 64000 }), { nil: undefined }),
    temperature: fc.option(fc.double({ min: 0, max: 2, noNaN: true }), { nil: undefined }),
    topP: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: undefined }),
    stop: fc.array(word, { maxLength: 5 }),
    reasoning: fc.option(
      fc.record({
        effort: fc.constantFrom(undefined, "minimal", "low", "medium", "high", "xhigh", "max"),
        budgetTokens: fc.option(fc.integer({ min: 1024, max: 32000 }), { nil: undefined }),
        summary: fc.boolean(),
      }),
      { nil: undefined },
    ),
    promptCacheKey: fc.option(fc.constant("tenant-7"), { nil: undefined }),
    stream: fc.boolean(),
  })
  .map((r): IrRequest => {
    const messages = conversation(
      r.rounds,
      r.format?.kind === "json_object" ? `${r.first} as JSON` : r.first,
    );
    const tools = r.withTools
      ? [
          { name: "get_weather", description: "Weather", parameters: r.parameters, strict: undefined },
          { name: "noop", description: undefined, parameters: undefined, strict: undefined },
        ]
      : [];
    return {
      model: r.model,
      system: r.system,
      messages,
      tools,
      toolChoice: r.toolChoice === "named" ? { mode: "named", name: "get_weather" } : { mode: r.toolChoice },
      parallelToolCalls: r.parallelToolCalls,
      format: r.format,
      maxTokens: r.maxTokens,
      temperature: r.temperature,
      topP: r.topP,
      stop: r.stop,
      reasoning: r.reasoning,
      promptCacheKey: r.promptCacheKey,
      stream: r.stream,
    };
  });

describe("generated requests written for every upstream pass its contract", () => {
  test("Responses", () => {
    fc.assert(
      fc.property(request, (ir) => {
        expect(problems(ResponsesRequestContract, writeRequest("responses", ir, "up", 64000))).toEqual([]);
      }),
      { numRuns: 400 },
    );
  });
  test("Chat Completions", () => {
    fc.assert(
      fc.property(request, (ir) => {
        expect(problems(ChatRequestContract, writeRequest("chat", ir, "up", 64000))).toEqual([]);
      }),
      { numRuns: 400 },
    );
  });
  test("Messages, in the model's thinking form", () => {
    fc.assert(
      fc.property(request, (ir) => {
        const body = writeRequest("messages", ir, "up", 64000);
        expect(problems(MessagesRequestContract, body)).toEqual([]);
        const form =
          ir.model === "modelz-haiku-4-5-20251001" || ir.model === "modelx-5.4" ? "budget" : "adaptive";
        expect(thinkingFormProblem(body, form)).toBeUndefined();
      }),
      { numRuns: 400 },
    );
  });
});

describe("JSON Schemas across protocols", () => {
  test("strict compatibility", () => {
    expect(isStrictCompatible(STRICT_SCHEMA)).toBe(true);
    expect(isStrictCompatible(LOOSE_SCHEMA)).toBe(false);
    expect(isStrictCompatible({ ...LOOSE_SCHEMA, additionalProperties: false })).toBe(false);
  });
  test("Anthropic form: objects with properties closed, constraints into the description", () => {
    const schema = anthropicSchema(LOOSE_SCHEMA);
    expect(schema).toEqual({ ...LOOSE_SCHEMA, additionalProperties: false });
    const strict = anthropicSchema(STRICT_SCHEMA);
    expect(anthropicFormatViolation(strict)).toBeUndefined();
    expect(strict?.properties).toEqual({
      city: { type: "string", description: "{minLength: 2}" },
      days: { type: "integer", description: "{minimum: 1, maximum: 7}" },
      tags: { type: "array", items: { type: "string" }, description: "{minItems: 2}" },
    });
  });
  test("Anthropic form: none for objects open to any key (closing them would change the meaning)", () => {
    expect(anthropicSchema({ type: "object" })).toBeUndefined();
    expect(anthropicSchema({ ...LOOSE_SCHEMA, additionalProperties: true })).toBeUndefined();
    expect(
      anthropicSchema({
        type: "object",
        properties: { meta: { type: "object", additionalProperties: { type: "string" } } },
      }),
    ).toBeUndefined();
  });
});

describe("mid-conversation system messages on a same-protocol Messages request", () => {
  const base = { model: "m", max_tokens: 10 };
  test("nothing to move: the client's bytes are forwarded untouched", () => {
    expect(systemOverrides({ ...base, messages: [{ role: "user", content: "Hi" }] })).toBeUndefined();
  });
  test("strings join the string system in order", () => {
    const out = systemOverrides({
      ...base,
      system: "A.",
      messages: [
        { role: "user", content: "Hi" },
        { role: "system", content: "B." },
        { role: "user", content: "Go" },
      ],
    });
    expect(out).toEqual({
      system: "A.\n\nB.",
      messages: [
        { role: "user", content: "Hi" },
        { role: "user", content: "Go" },
      ],
    });
  });
  test("blocks keep their cache_control marks", () => {
    const cached = { type: "text", text: "A.", cache_control: { type: "ephemeral" } };
    const out = systemOverrides({
      ...base,
      system: [cached],
      messages: [
        { role: "system", content: "B." },
        { role: "user", content: "Hi" },
      ],
    });
    expect(out?.system).toEqual([cached, { type: "text", text: "B." }]);
  });
});
