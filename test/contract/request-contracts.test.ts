// The outgoing contracts themselves: each accepts a valid request of its API and rejects the
// requests issue 14 found the live APIs refusing (and misplaced or unknown fields), so the matrix
// passing means something.
import { describe, expect, test } from "bun:test";
import { ChatRequestContract } from "./chat-request.ts";
import { problems } from "./client-schemas.ts";
import { MessagesRequestContract, thinkingFormProblem } from "./messages-request.ts";
import { LOOSE_SCHEMA, STRICT_SCHEMA } from "./request-scenarios.ts";
import { ResponsesRequestContract } from "./responses-request.ts";
import { anthropicFormatViolation, strictViolation } from "./schema-rules.ts";

type Obj = Record<string, unknown>;

const responses = (extra: Obj): string[] =>
  problems(ResponsesRequestContract, { model: "m", input: "Hi", ...extra });
const chat = (extra: Obj): string[] =>
  problems(ChatRequestContract, { model: "m", messages: [{ role: "user", content: "Hi" }], ...extra });
const messages = (extra: Obj): string[] =>
  problems(MessagesRequestContract, {
    model: "m",
    max_tokens: 2048,
    messages: [{ role: "user", content: "Hi" }],
    ...extra,
  });

const toolLoop = (assistant: Obj[]) => [
  { role: "user", content: "ls" },
  { role: "assistant", content: assistant },
  { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "a.txt" }] },
];
const toolUse = { type: "tool_use", id: "t1", name: "Bash", input: {} };

describe("schema rules", () => {
  test("strict mode needs every property required and additionalProperties false on every object", () => {
    expect(strictViolation(STRICT_SCHEMA)).toBeUndefined();
    expect(strictViolation(LOOSE_SCHEMA)).toContain("additionalProperties");
    expect(strictViolation({ ...LOOSE_SCHEMA, additionalProperties: false })).toContain('"unit"');
    const nested = {
      ...STRICT_SCHEMA,
      properties: { inner: { type: "object", properties: {} } },
      required: ["inner"],
    };
    expect(strictViolation(nested)).toContain("$.properties.inner");
  });
  test("Anthropic formats: closed objects, supported keywords and formats, minItems 0 or 1", () => {
    const closed = {
      type: "object",
      properties: { d: { type: "string", format: "date" } },
      additionalProperties: false,
    };
    expect(anthropicFormatViolation(closed)).toBeUndefined();
    expect(anthropicFormatViolation({ type: "object" })).toContain("additionalProperties");
    expect(anthropicFormatViolation(STRICT_SCHEMA)).toContain("minLength");
    expect(anthropicFormatViolation({ type: "string", format: "ipv5" })).toContain("ipv5");
    expect(anthropicFormatViolation({ type: "array", items: { type: "string" }, minItems: 2 })).toContain(
      "minItems",
    );
  });
});

describe("Responses contract", () => {
  test("accepts a full valid request", () => {
    expect(
      responses({
        instructions: "Be brief.",
        input: [
          { role: "user", content: [{ type: "input_text", text: "Hi" }] },
          { role: "assistant", content: "Hello." },
          { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "x" },
          { type: "function_call", call_id: "c1", name: "f", arguments: "{}" },
          { type: "function_call_output", call_id: "c1", output: "ok" },
        ],
        tools: [{ type: "function", name: "f", parameters: STRICT_SCHEMA, strict: true }],
        tool_choice: { type: "function", name: "f" },
        max_output_tokens: 16,
        reasoning: { effort: "high", summary: "auto" },
        include: ["reasoning.encrypted_content"],
        text: { format: { type: "json_schema", name: "w", schema: STRICT_SCHEMA, strict: true } },
        prompt_cache_key: "k",
        store: false,
        stream: true,
      }),
    ).toEqual([]);
  });
  test("rejects what the live API refuses", () => {
    expect(responses({ max_output_tokens: 10 }).join()).toContain("at least 16");
    expect(
      responses({
        text: { format: { type: "json_schema", name: "w", schema: LOOSE_SCHEMA, strict: true } },
      }).join(),
    ).toContain("strict");
    expect(
      responses({ input: [{ role: "assistant", content: [{ type: "output_text", text: "Hi" }] }] }),
    ).not.toEqual([]);
    expect(
      responses({ input: [{ role: "assistant", content: [{ type: "input_text", text: "Hi" }] }] }),
    ).not.toEqual([]);
    expect(responses({ input: [{ type: "reasoning", summary: [], encrypted_content: "x" }] })).not.toEqual(
      [],
    );
    expect(
      responses({ input: [{ type: "function_call_output", call_id: "c9", output: "ok" }] }).join(),
    ).toContain("c9");
    expect(responses({ tools: [{ type: "function", name: "f", parameters: {} }] })).not.toEqual([]);
    expect(responses({ text: { format: { type: "json_object" } }, input: "Hi" }).join()).toContain("JSON");
    expect(responses({ stream_options: { include_obfuscation: false } }).join()).toContain("stream");
  });
  test("rejects unknown and misplaced fields", () => {
    expect(responses({ reasoning_effort: "high" })).not.toEqual([]);
    expect(responses({ max_tokens: 100 })).not.toEqual([]);
    expect(responses({ reasoning: { effort: "max" } })).not.toEqual([]);
  });
});

describe("Chat contract", () => {
  test("accepts a full valid request", () => {
    expect(
      chat({
        messages: [
          { role: "system", content: "Be brief." },
          { role: "user", content: [{ type: "image_url", image_url: { url: "https://x/y.png" } }] },
          {
            role: "assistant",
            content: null,
            tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }],
          },
          { role: "tool", tool_call_id: "c1", content: "ok" },
          { role: "developer", content: "Now in German." },
        ],
        tools: [{ type: "function", function: { name: "f", parameters: LOOSE_SCHEMA } }],
        tool_choice: "auto",
        response_format: {
          type: "json_schema",
          json_schema: { name: "w", schema: STRICT_SCHEMA, strict: true },
        },
        max_completion_tokens: 10,
        stream: true,
        stream_options: { include_usage: true },
        reasoning_effort: "xhigh",
        prompt_cache_key: "k",
      }),
    ).toEqual([]);
  });
  test("rejects what the live API refuses", () => {
    expect(
      chat({
        response_format: {
          type: "json_schema",
          json_schema: { name: "w", schema: LOOSE_SCHEMA, strict: true },
        },
      }).join(),
    ).toContain("strict");
    expect(chat({ messages: [{ role: "tool", tool_call_id: "c1", content: "ok" }] }).join()).toContain("c1");
    expect(
      chat({
        messages: [
          { role: "tool", tool_call_id: "c1", content: [{ type: "image_url", image_url: { url: "u" } }] },
        ],
      }),
    ).not.toEqual([]);
    expect(
      chat({
        messages: [
          { role: "user", content: "Hi" },
          { role: "assistant", content: null },
        ],
      }),
    ).not.toEqual([]);
    expect(chat({ tool_choice: "auto" }).join()).toContain("tools");
    expect(chat({ stream_options: { include_usage: true } }).join()).toContain("stream");
    expect(chat({ response_format: { type: "json_object" } }).join()).toContain("JSON");
    expect(chat({ stop: ["a", "b", "c", "d", "e"] })).not.toEqual([]);
  });
  test("rejects unknown and misplaced fields", () => {
    expect(chat({ reasoning: { effort: "high" } })).not.toEqual([]);
    expect(chat({ max_output_tokens: 100 })).not.toEqual([]);
    expect(chat({ reasoning_effort: "max" })).not.toEqual([]);
  });
});

describe("Messages contract", () => {
  test("accepts a full valid request", () => {
    expect(
      messages({
        system: [{ type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } }],
        messages: toolLoop([{ type: "thinking", thinking: "t", signature: "s" }, toolUse]),
        tools: [
          { name: "Bash", input_schema: { type: "object" }, cache_control: { type: "ephemeral", ttl: "1h" } },
        ],
        tool_choice: { type: "auto" },
        thinking: { type: "enabled", budget_tokens: 1024 },
        output_config: {
          effort: "high",
          format: {
            type: "json_schema",
            schema: { type: "object", properties: {}, additionalProperties: false },
          },
        },
        stream: true,
      }),
    ).toEqual([]);
  });
  test("rejects what the live API refuses", () => {
    expect(messages({ temperature: 0.5, top_p: 0.9 }).join()).toContain("temperature and top_p");
    expect(
      messages({ output_config: { format: { type: "json_schema", schema: LOOSE_SCHEMA } } }).join(),
    ).toContain("additionalProperties");
    expect(
      messages({ output_config: { format: { type: "json_schema", schema: { type: "object" } } } }),
    ).not.toEqual([]);
    const tools = [{ name: "Bash", input_schema: { type: "object" } }];
    for (const choice of [{ type: "any" }, { type: "tool", name: "Bash" }])
      expect(messages({ tools, tool_choice: choice, thinking: { type: "adaptive" } }).join()).toContain(
        "tool_choice",
      );
    expect(
      messages({ tools, messages: toolLoop([toolUse]), thinking: { type: "adaptive" } }).join(),
    ).toContain("thinking block");
    expect(
      messages({
        messages: [
          { role: "system", content: "x" },
          { role: "user", content: "Hi" },
        ],
      }),
    ).not.toEqual([]);
    expect(messages({ thinking: { type: "enabled", budget_tokens: 4096 } }).join()).toContain("max_tokens");
    expect(
      messages({ thinking: { type: "enabled", budget_tokens: 1024 }, temperature: 0.5 }).join(),
    ).toContain("temperature");
    expect(messages({ messages: [{ role: "user", content: [{ type: "text", text: "" }] }] })).not.toEqual([]);
    expect(messages({ messages: toolLoop([toolUse]) }).join()).toContain("must define tools");
    expect(
      messages({
        messages: [{ role: "user", content: [{ type: "tool_result", tool_use_id: "t7" }] }],
      }).join(),
    ).toContain("t7");
  });
  test("rejects unknown and misplaced fields", () => {
    expect(messages({ max_completion_tokens: 10 })).not.toEqual([]);
    expect(messages({ response_format: { type: "json_object" } })).not.toEqual([]);
    expect(messages({ thinking: { type: "enabled" } })).not.toEqual([]);
    expect(
      messages({ messages: [{ role: "user", content: [{ type: "thinking", thinking: "t" }] }] }),
    ).not.toEqual([]);
  });
  test("thinking form per model", () => {
    expect(thinkingFormProblem({ thinking: { type: "enabled", budget_tokens: 2000 } }, "adaptive")).toContain(
      "adaptive",
    );
    expect(thinkingFormProblem({ thinking: { type: "adaptive" } }, "budget")).toContain("budget_tokens");
    expect(thinkingFormProblem({ thinking: { type: "adaptive" } }, "adaptive")).toBeUndefined();
  });
});
