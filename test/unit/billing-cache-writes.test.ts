// Anthropic prompt-cache writes billed at their own prices: Anthropic's usage (cache reads, cache
// writes in total and by lifetime) read into UsageCounts, and priced with the documented ratios to
// the base input price — 5-minute write 1.25×, 1-hour write 2×, cache read 0.1×.
import { describe, expect, test } from "bun:test";
import * as v from "valibot";
import { Pricer } from "../../src/billing/cost.ts";
import { buildPriceTable } from "../../src/billing/prices.ts";
import { BillingSchema } from "../../src/config/prices.ts";
import { anthropicUsage, openaiUsage } from "../../src/wire/text-usage.ts";
import { mid } from "../helpers/ids.ts";
import { model, usage } from "./billing-fixture.ts";

const WORST = { kind: "text", inputTokens: 0, maxOutputTokens: 0 } as const;

function pricer(billing: Record<string, unknown> = {}): Pricer {
  return new Pricer(buildPriceTable(v.parse(BillingSchema, billing)));
}

describe("Anthropic usage with cache writes", () => {
  test("writes by lifetime are parts of input; without the split every write is 5-minute", () => {
    expect(
      anthropicUsage({
        input_tokens: 10,
        cache_read_input_tokens: 200,
        cache_creation_input_tokens: 1000,
        cache_creation: { ephemeral_5m_input_tokens: 600, ephemeral_1h_input_tokens: 400 },
        output_tokens: 7,
      }),
    ).toEqual({
      inputTokens: 1210,
      cachedInputTokens: 200,
      cacheWriteTokens: 600,
      cacheWrite1hTokens: 400,
      outputTokens: 7,
      reasoningTokens: 0,
      generations: 0,
    });
    const unsplit = anthropicUsage({ input_tokens: 3, cache_creation_input_tokens: 50, output_tokens: 1 });
    expect(unsplit?.cacheWriteTokens).toBe(50);
    expect(unsplit?.cacheWrite1hTokens).toBe(0);
    expect(unsplit?.inputTokens).toBe(53);
  });
});

describe("OpenAI usage with cache writes", () => {
  test("cache_write_tokens in the input details are writes at the default lifetime, inside input", () => {
    const responses = openaiUsage({
      input_tokens: 900,
      input_tokens_details: { cached_tokens: 100, cache_write_tokens: 300 },
      output_tokens: 5,
    });
    expect([responses?.inputTokens, responses?.cachedInputTokens, responses?.cacheWriteTokens]).toEqual([
      900, 100, 300,
    ]);
    const chat = openaiUsage({
      prompt_tokens: 50,
      completion_tokens: 2,
      prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 40 },
    });
    expect(chat?.cacheWriteTokens).toBe(40);
    expect(chat?.cacheWrite1hTokens).toBe(0);
  });
});

describe("cache-write prices", () => {
  // Base input $3/Mtok: 5-minute write $3.75 (1.25×), 1-hour write $6 (2×), read $0.30 (0.1×).
  const SONNET = {
    text: {
      "modelz-sonnet-4-6": {
        input_usd_per_mtok: "3",
        cached_input_usd_per_mtok: "0.30",
        output_usd_per_mtok: "15",
        cache_write_usd_per_mtok: "3.75",
        cache_write_1h_usd_per_mtok: "6",
      },
    },
  };

  test("each part of input at its own price, with the documented multipliers", () => {
    // 10 plain × 3 + 200 read × 0.30 + 600 5m × 3.75 + 400 1h × 6 + 7 output × 15 (USD/Mtok)
    // = 30 + 60 + 2250 + 2400 + 105 = 4845 USD per million tokens → 4845e9 / 1e6 = 4,845,000 nanos.
    const cost = pricer(SONNET).actual(
      model("modelz-sonnet-4-6"),
      WORST,
      usage({
        inputTokens: 1210,
        cachedInputTokens: 200,
        cacheWriteTokens: 600,
        cacheWrite1hTokens: 400,
        outputTokens: 7,
      }),
      undefined,
    );
    expect<number>(cost).toBe(4_845_000);
    // Priced as plain input (the old behaviour) it would be 30 + 60 + 3000 + 105 = 3195 → 3,195,000.
    expect<number>(cost).not.toBe(3_195_000);
  });

  test("the modelz defaults keep Anthropic's ratios to their input price", () => {
    const table = buildPriceTable(v.parse(BillingSchema, {}));
    for (const [id, price] of table.text) {
      if (!id.startsWith("modelz-")) continue;
      expect(price.cacheWrite * 100n).toBe(price.input * 125n);
      expect(price.cacheWrite1h).toBe(price.input * 2n);
      expect(price.cachedInput * 10n).toBe(price.input);
    }
    // OpenAI-style models bill no write premium.
    const modelx = table.text.get(mid("modelx-5.5"));
    expect(modelx?.cacheWrite).toBe(modelx?.input);
  });

  test("parts never bill a token twice: writes beyond input are capped", () => {
    const p = pricer(SONNET);
    // 100 input, all claimed as 5m writes and again as 1h writes: 100 × 3.75e9 / 1e6 = 375,000 nanos.
    const cost = p.actual(
      model("modelz-sonnet-4-6"),
      WORST,
      usage({ inputTokens: 100, cacheWriteTokens: 100, cacheWrite1hTokens: 100 }),
      undefined,
    );
    expect<number>(cost).toBe(375_000);
  });

  test("a malformed write price names its field", () => {
    const bad = v.safeParse(BillingSchema, {
      text: { "modelz-sonnet-4-6": { cache_write_1h_usd_per_mtok: "six" } },
    });
    expect(bad.success).toBe(false);
    expect(JSON.stringify(bad.issues?.[0]?.path?.map((p) => p.key))).toContain("cache_write_1h_usd_per_mtok");
  });
});
