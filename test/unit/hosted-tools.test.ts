// Hosted (server-side) tools: which a request may carry (src/pipeline/forwarding.ts), how their
// calls are counted from each protocol's answers and events (src/protocols/<name>/usage.ts), and
// what they cost and reserve (src/billing/cost.ts rule 7), against hand-computed figures.
import { describe, expect, test } from "bun:test";
import * as v from "valibot";
import { Pricer } from "../../src/billing/cost.ts";
import { buildPriceTable } from "../../src/billing/prices.ts";
import { BillingSchema } from "../../src/config/prices.ts";
import { checkForwardable } from "../../src/pipeline/forwarding.ts";
import { UsageTap } from "../../src/pipeline/relay/tap.ts";
import { answerUsage, streamUsage } from "../../src/protocols/usage.ts";
import { GatewayError } from "../../src/wire/errors.ts";
import { mid } from "../helpers/ids.ts";
import { model, usage } from "./billing-fixture.ts";

const billing = (tools: Record<string, unknown> = {}) => v.parse(BillingSchema, { tools });
const pricer = (tools: Record<string, unknown> = {}) => new Pricer(buildPriceTable(billing(tools)));
const TOOLS = billing().tools;

/** The 400/422 a check throws, or undefined when it passes. */
function refusal(check: () => unknown): GatewayError | undefined {
  try {
    check();
    return undefined;
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
}

describe("which hosted tools a request may carry", () => {
  test("Codex's {type: web_search} passes and is reserved for", () => {
    const reserve = checkForwardable(
      "responses",
      { tools: [{ type: "function", name: "shell" }, { type: "web_search" }] },
      TOOLS,
    );
    expect(reserve).toEqual({ tools: [{ tool: "web_search", maxUses: undefined }], maxToolCalls: undefined });
  });

  test("tools billed in tokens only pass with nothing to reserve", () => {
    const tools = [
      "function",
      "custom",
      "mcp",
      "computer_use_preview",
      "local_shell",
      "shell",
      "apply_patch",
    ];
    expect(checkForwardable("responses", { tools: tools.map((type) => ({ type })) }, TOOLS)).toBeUndefined();
    const anthropic = [
      { name: "f", input_schema: {} },
      { type: "bash_20250124" },
      { type: "memory_20250818" },
    ];
    expect(checkForwardable("messages", { tools: anthropic }, TOOLS)).toBeUndefined();
  });

  test.each([["messages", "code_execution_20250825", "container time"]] as const)(
    "%s %s is refused with 400 naming it and the setting",
    (protocol, type, by) => {
      const body = { tools: [{ type: "function", name: "f" }, { type }] };
      const error = refusal(() => checkForwardable(protocol, body, TOOLS));
      expect(error?.status).toBe(400);
      expect(error?.param).toBe("tools[1]");
      expect(error?.message).toContain(`"${type}"`);
      expect(error?.message).toContain(by);
      expect(error?.message).toContain("[billing.tools] allow_unpriced = true");
    },
  );

  test("allow_unpriced forwards an unpriced tool (unbilled)", () => {
    const allowed = billing({ allow_unpriced: true }).tools;
    expect(
      checkForwardable("messages", { tools: [{ type: "code_execution_20250825" }] }, allowed),
    ).toBeUndefined();
  });

  test("max_tool_calls and Anthropic max_uses become the caps reserved", () => {
    const body = { tools: [{ type: "web_search_preview" }, { type: "file_search" }], max_tool_calls: 3 };
    expect(checkForwardable("responses", body, TOOLS)).toEqual({
      tools: [
        { tool: "web_search", maxUses: undefined },
        { tool: "file_search", maxUses: undefined },
      ],
      maxToolCalls: 3,
    });
    const messages = { tools: [{ type: "web_search_20250305", name: "web_search", max_uses: 2 }] };
    expect(checkForwardable("messages", messages, TOOLS)?.tools).toEqual([
      { tool: "web_search", maxUses: 2 },
    ]);
  });

  test("the image generation tool (Cline sends it on every request) is priced, with what one call makes", () => {
    const body = {
      tools: [
        { type: "web_search" },
        {
          type: "image_generation",
          model: "modelx-image-2",
          quality: "low",
          size: "1024x1024",
          partial_images: 2,
        },
        { type: "image_generation", model: "gpt-image-1" },
      ],
    };
    expect(checkForwardable("responses", body, TOOLS)?.tools).toEqual([
      { tool: "web_search", maxUses: undefined },
      {
        tool: "image_generation",
        maxUses: undefined,
        image: { model: mid("modelx-image-2"), quality: "low", size: "1024x1024", partialImages: 2 },
      },
      {
        tool: "image_generation",
        maxUses: undefined,
        image: { model: undefined, quality: "auto", size: "auto", partialImages: 0 },
      },
    ]);
  });

  test("a max_uses that is not a whole number from 1 is refused naming it", () => {
    const at = (max_uses: unknown) =>
      refusal(() =>
        checkForwardable("messages", { tools: [{ type: "web_fetch_20250910", max_uses }] }, TOOLS),
      );
    expect([at(0)?.status, at(0)?.param]).toEqual([422, "tools[0].max_uses"]);
    expect([at("3")?.status, at("3")?.param]).toEqual([400, "tools[0].max_uses"]);
  });
});

describe("image generation tool calls are priced from the image table", () => {
  const text = { kind: "text", inputTokens: 0, maxOutputTokens: 0 } as const;
  const cline = checkForwardable(
    "responses",
    { tools: [{ type: "web_search" }, { type: "image_generation" }] },
    TOOLS,
  );

  test("a call at auto costs the default model's dearest generation; the worst case reserves one such call", () => {
    // modelx-image-1 is half of modelx-image-2: auto quality = high, auto size = the largest, $0.06 / 2.
    const cost = pricer().actual(
      model("modelx-5.4"),
      { ...text, tools: cline },
      usage({ toolCalls: { image_generation: 2, web_search: 1 } }),
      undefined,
    );
    expect<number>(cost).toBe(2 * 30_000_000 + 10_000_000);
    // Reserved: 5 web searches (reserve_calls) and 1 image generation (image_generation_reserve_calls).
    expect<number>(pricer().worstCase(model("modelx-5.4"), { ...text, tools: cline })).toBe(
      5 * 10_000_000 + 30_000_000,
    );
  });

  test("the tool's model, quality, size and progress images set the price; max_tool_calls caps the reservation", () => {
    const body = {
      tools: [
        {
          type: "image_generation",
          model: "modelx-image-2",
          quality: "low",
          size: "1024x1024",
          partial_images: 2,
        },
      ],
      max_tool_calls: 4,
    };
    const reserve = checkForwardable("responses", body, TOOLS);
    // 3 generations (1 + 2 progress images) × $0.004.
    const cost = pricer().actual(
      model("modelx-5.4"),
      { ...text, tools: reserve },
      usage({ toolCalls: { image_generation: 1 } }),
      undefined,
    );
    expect<number>(cost).toBe(12_000_000);
    expect<number>(pricer().worstCase(model("modelx-5.4"), { ...text, tools: reserve })).toBe(4 * 12_000_000);
    const configured = pricer({
      image_generation_model: "modelx-image-2",
      image_generation_reserve_calls: 2,
    });
    expect<number>(configured.worstCase(model("modelx-5.4"), { ...text, tools: cline })).toBe(
      5 * 10_000_000 + 2 * 60_000_000,
    );
  });

  test("a code interpreter reserves its one container at $0.03 per GB of memory_limit; calls count per container", () => {
    const reserve = checkForwardable(
      "responses",
      { tools: [{ type: "code_interpreter", container: { type: "auto", memory_limit: "16g" } }] },
      TOOLS,
    );
    expect(reserve?.tools).toEqual([{ tool: "code_interpreter", maxUses: 1, containerGb: 16 }]);
    expect<number>(pricer().worstCase(model("modelx-5.4"), { ...text, tools: reserve })).toBe(
      16 * 30_000_000,
    );
    const item = (id: string, container: string) => ({
      type: "code_interpreter_call",
      id,
      container_id: container,
    });
    const counted = answerUsage("responses", {
      output: [item("a", "c1"), item("b", "c1"), item("c", "c2")],
      usage: { input_tokens: 1, output_tokens: 1 },
    });
    expect(counted?.toolCalls).toEqual({ code_interpreter: 2 });
  });

  test("an unknown image model in [billing.tools] is refused at config load, naming it", () => {
    expect(() => billing({ image_generation_model: "gpt-image-1" })).toThrow();
  });
});

describe("tool calls cost count × price, exactly", () => {
  test("two web searches on top of the tokens (modelx-5.4 defaults)", () => {
    // 100 input × 0.40 + 20 output × 1.60 USD/Mtok = 72,000 nano-USD; 2 × $0.01 = 20,000,000.
    const cost = pricer().actual(
      model("modelx-5.4"),
      { kind: "text", inputTokens: 0, maxOutputTokens: 0 },
      usage({ inputTokens: 100, outputTokens: 20, toolCalls: { web_search: 2 } }),
      undefined,
    );
    expect<number>(cost).toBe(20_072_000);
  });

  test("configured prices, each tool apart; web fetch free by default", () => {
    const p = pricer({ web_search_usd_per_call: "0.025", file_search_usd_per_call: "0.000000001" });
    const calls = { web_search: 3, file_search: 7, web_fetch: 4 };
    const cost = p.actual(
      model("modelz-sonnet-4-6"),
      { kind: "text", inputTokens: 0, maxOutputTokens: 0 },
      usage({ toolCalls: calls }),
      undefined,
    );
    expect<number>(cost).toBe(3 * 25_000_000 + 7);
  });
});

describe("the reservation covers the tool calls a request may make", () => {
  const worst = (tools: Parameters<typeof checkForwardable>[1], config: Record<string, unknown> = {}) =>
    Number(
      pricer(config).worstCase(model("modelx-5.4"), {
        kind: "text",
        inputTokens: 0,
        maxOutputTokens: 0,
        tools: checkForwardable("responses", tools, billing(config).tools),
      }),
    );

  test("max_tool_calls calls, at the dearest tool present", () => {
    const tools = [{ type: "file_search" }, { type: "web_search" }];
    expect(worst({ tools, max_tool_calls: 3 })).toBe(3 * 10_000_000);
  });

  test("without max_tool_calls, reserve_calls for each priced tool", () => {
    const tools = [{ type: "file_search" }, { type: "web_search" }];
    expect(worst({ tools })).toBe(5 * 10_000_000 + 5 * 2_500_000);
    expect(worst({ tools }, { reserve_calls: 1 })).toBe(10_000_000 + 2_500_000);
  });

  test("Anthropic max_uses caps its tool", () => {
    const reserve = checkForwardable(
      "messages",
      { tools: [{ type: "web_search_20250305", max_uses: 2 }, { type: "web_fetch_20250910" }] },
      TOOLS,
    );
    const cost = pricer().worstCase(model("modelz-sonnet-4-6"), {
      kind: "text",
      inputTokens: 0,
      maxOutputTokens: 0,
      tools: reserve,
    });
    expect<number>(cost).toBe(2 * 10_000_000);
  });
});

const sse = (type: string, body: Record<string, unknown>) => JSON.stringify({ type, ...body });
const SEARCH = (id: string) => ({
  type: "web_search_call",
  id,
  status: "completed",
  action: { type: "search" },
});
const MESSAGE = {
  type: "message",
  role: "assistant",
  content: [{ type: "output_text", text: "web_search_call" }],
};
const OPENAI_USAGE = { input_tokens: 100, output_tokens: 20 };

describe("counting calls in answers and streams", () => {
  test("Responses: output items of a complete answer", () => {
    const answer = {
      output: [SEARCH("a"), { type: "file_search_call", id: "f" }, SEARCH("b"), MESSAGE],
      usage: OPENAI_USAGE,
    };
    expect(answerUsage("responses", answer)?.toolCalls).toEqual({ web_search: 2, file_search: 1 });
    expect(answerUsage("responses", { output: [MESSAGE], usage: OPENAI_USAGE })?.toolCalls).toBeUndefined();
  });

  test("Responses stream: items done and the final output count the same calls once", () => {
    const tap = new UsageTap("responses", streamUsage("responses"));
    tap.onEvent("response.output_item.done", sse("response.output_item.done", { item: SEARCH("a") }));
    tap.onEvent("response.output_item.done", sse("response.output_item.done", { item: MESSAGE }));
    tap.onEvent(undefined, sse("response.output_item.done", { item: SEARCH("b") }));
    const output = [SEARCH("a"), SEARCH("b"), MESSAGE];
    tap.onEvent(
      "response.completed",
      sse("response.completed", { response: { output, usage: OPENAI_USAGE } }),
    );
    expect(tap.usage(0, 4000)).toEqual({
      usage: { ...usage({ inputTokens: 100, outputTokens: 20 }), toolCalls: { web_search: 2 } },
      source: "reported",
    });
  });

  test("Responses stream: code interpreter items count their distinct containers, once across events and output", () => {
    const item = (id: string, container: string) => ({
      type: "code_interpreter_call",
      id,
      container_id: container,
    });
    const tap = new UsageTap("responses", streamUsage("responses"));
    for (const [id, container] of [
      ["a", "c1"],
      ["b", "c1"],
      ["c", "c2"],
    ] as const)
      tap.onEvent(
        "response.output_item.done",
        sse("response.output_item.done", { item: item(id, container) }),
      );
    const output = [item("a", "c1"), item("b", "c1"), item("c", "c2"), MESSAGE];
    tap.onEvent(
      "response.completed",
      sse("response.completed", { response: { output, usage: OPENAI_USAGE } }),
    );
    expect(tap.usage(0, 4000).usage.toolCalls).toEqual({ code_interpreter: 2 });
  });

  test("a Responses stream that breaks after a search still bills it (counted)", () => {
    const tap = new UsageTap("responses", streamUsage("responses"));
    tap.onEvent("response.output_item.done", sse("response.output_item.done", { item: SEARCH("a") }));
    tap.onEvent("response.output_text.delta", sse("response.output_text.delta", { delta: "x" }));
    const settled = tap.usage(50, 4000);
    expect(settled.source).toBe("counted");
    expect(settled.usage.toolCalls).toEqual({ web_search: 1 });
  });

  test("Anthropic: usage.server_tool_use, complete and cumulative in message_delta", () => {
    const served = { web_search_requests: 3, web_fetch_requests: 1 };
    const answer = { usage: { input_tokens: 100, output_tokens: 20, server_tool_use: served } };
    expect(answerUsage("messages", answer)?.toolCalls).toEqual({ web_search: 3, web_fetch: 1 });
    const tap = new UsageTap("messages", streamUsage("messages"));
    tap.onEvent(
      "message_start",
      sse("message_start", { message: { usage: { input_tokens: 100, output_tokens: 1 } } }),
    );
    tap.onEvent(
      "message_delta",
      sse("message_delta", {
        delta: {},
        usage: { output_tokens: 5, server_tool_use: { web_search_requests: 1 } },
      }),
    );
    tap.onEvent(
      "message_delta",
      sse("message_delta", {
        delta: {},
        usage: { output_tokens: 20, server_tool_use: { web_search_requests: 3 } },
      }),
    );
    tap.onEvent("message_stop", sse("message_stop", {}));
    expect(tap.usage(0, 4000).usage.toolCalls).toEqual({ web_search: 3 });
  });
});
