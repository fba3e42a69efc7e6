// Prices → cost against hand-computed figures: cached input, reasoning tokens, images with
// partial_images, input fidelity, interrupted streams, and the rounding rules of src/billing/cost.ts.
import { afterEach, describe, expect, test } from "bun:test";
import * as v from "valibot";
import { Pricer } from "../../src/billing/cost.ts";
import { buildPriceTable, permille } from "../../src/billing/prices.ts";
import { BillingSchema } from "../../src/config/prices.ts";
import { admitInput, type Fixture, fixture, model, usage } from "./billing-fixture.ts";

function pricer(billing: Record<string, unknown> = {}): Pricer {
  return new Pricer(buildPriceTable(v.parse(BillingSchema, billing)));
}

const TEXT_PRICES = {
  text: {
    "modelx-5.5": {
      input_usd_per_mtok: "1.25",
      cached_input_usd_per_mtok: "0.125",
      output_usd_per_mtok: "10",
    },
  },
};
const TEXT_WORST = { kind: "text", inputTokens: 0, maxOutputTokens: 0 } as const;

describe("text cost", () => {
  test("cached input at the cached price, the rest at the input price, output at the output price", () => {
    // 1000 input of which 400 cached, 250 output:
    // 600 × 1.25e9 + 400 × 0.125e9 + 250 × 10e9 = 750e9 + 50e9 + 2500e9 = 3300e9 → /1e6 = 3,300,000 nanos.
    const cost = pricer(TEXT_PRICES).actual(
      model("modelx-5.5"),
      TEXT_WORST,
      usage({ inputTokens: 1000, cachedInputTokens: 400, outputTokens: 250 }),
      undefined,
    );
    expect<number>(cost).toBe(3_300_000);
  });

  test("reasoning tokens are billed as output (they are part of output_tokens)", () => {
    // 100 input, 500 output of which 300 reasoning: 100 × 1.25e9 + 500 × 10e9 = 5125e9 → 5,125,000.
    const p = pricer(TEXT_PRICES);
    const withReasoning = p.actual(
      model("modelx-5.5"),
      TEXT_WORST,
      usage({ inputTokens: 100, outputTokens: 500, reasoningTokens: 300 }),
      undefined,
    );
    expect<number>(withReasoning).toBe(5_125_000);
    // An upstream that reports more reasoning than output: the larger figure is billed.
    const odd = p.actual(
      model("modelx-5.5"),
      TEXT_WORST,
      usage({ outputTokens: 10, reasoningTokens: 40 }),
      undefined,
    );
    expect<number>(odd).toBe(400_000);
  });

  test("rounding: one division per request, rounded up to a whole nano-USD", () => {
    // 0.0000025 USD/Mtok = 2500 nano-USD per million tokens = 0.0025 nano-USD per token.
    const p = pricer({
      text: {
        "modelx-5.5": {
          input_usd_per_mtok: "0.0000025",
          cached_input_usd_per_mtok: "0.000001",
          output_usd_per_mtok: "0",
        },
      },
    });
    const cost = (input: number, cached = 0) =>
      Number(
        p.actual(
          model("modelx-5.5"),
          TEXT_WORST,
          usage({ inputTokens: input, cachedInputTokens: cached }),
          undefined,
        ),
      );
    // 0 → 0; 1 token = 0.0025 → 1; 400 = 1 exactly → 1; 401 = 1.0025 → 2.
    expect([cost(0), cost(1), cost(400), cost(401)]).toEqual([0, 1, 1, 2]);
    // Summed before rounding: 200 uncached (0.5) + 200 cached (0.2) = 0.7 → 1, not 1 + 1 = 2.
    expect(cost(400, 200)).toBe(1);
  });

  test("worst case: counted input plus the requested or maximum output, no cache discount", () => {
    // Default placeholders for modelx-5.4-mini: 0.10 in, 0.40 out. 2000 × 0.1e9 + 128000 × 0.4e9 = 51,400e9 → 51,400,000.
    const worst = pricer().worstCase(model("modelx-5.4-mini"), {
      kind: "text",
      inputTokens: 2000,
      maxOutputTokens: 128_000,
    });
    expect<number>(worst).toBe(51_400_000);
  });

  test("worst case covers a prompt written whole to a 1-hour cache (dearer than plain input)", () => {
    // modelz-sonnet-4-6 placeholders: 0.30 in, 0.60 1-hour write, 1.20 out. 10,000 input all written
    // to the 1-hour cache + 1000 output: 10,000 × 0.6e9 + 1000 × 1.2e9 = 7,200e9 → 7,200,000.
    const p = pricer();
    const sonnet = model("modelz-sonnet-4-6");
    const worst = { kind: "text", inputTokens: 10_000, maxOutputTokens: 1000 } as const;
    const settled = p.actual(
      sonnet,
      worst,
      usage({ inputTokens: 10_000, cacheWrite1hTokens: 10_000, outputTokens: 1000 }),
      undefined,
    );
    expect<number>(settled).toBe(7_200_000);
    expect<number>(p.worstCase(sonnet, worst)).toBe(7_200_000);
  });

  test("costs are exact around 2^53: Number sums where exact, bigint sums above, the same figures", () => {
    // Rule 2 written out in bigints, the reference for every figure below.
    const reference = (u: ReturnType<typeof usage>, input: bigint, cached: bigint, out: bigint): bigint => {
      const whole = (n: number) => (Number.isFinite(n) && n > 0 ? BigInt(Math.ceil(n)) : 0n);
      const total = whole(u.inputTokens);
      let reads = whole(u.cachedInputTokens);
      if (reads > total) reads = total;
      const exact = (total - reads) * input + reads * cached + whole(u.outputTokens) * out;
      return (exact + 999_999n) / 1_000_000n;
    };
    // 1.000000001 USD/Mtok etc.: rates with every nano digit, so no product is a round number.
    const rates = { input: 1_000_000_001n, cached: 123_456_789n, output: 9_999_999_999n };
    const p = pricer({
      text: {
        "modelx-5.5": {
          input_usd_per_mtok: "1.000000001",
          cached_input_usd_per_mtok: "0.123456789",
          output_usd_per_mtok: "9.999999999",
        },
      },
    });
    // Token counts whose sums fall just below, at and above 2^53, plus fractions and garbage.
    const cases = [
      usage({ inputTokens: 1000, cachedInputTokens: 333, outputTokens: 77 }),
      usage({ inputTokens: 4_503_599, outputTokens: 450_359 }),
      usage({ inputTokens: 9_007_199, cachedInputTokens: 1, outputTokens: 1 }),
      usage({ inputTokens: 9_007_200, outputTokens: 0 }),
      usage({ inputTokens: 8_000_000, cachedInputTokens: 10, outputTokens: 100_000 }),
      usage({ inputTokens: 0.5, cachedInputTokens: -3, outputTokens: Number.NaN }),
    ];
    for (const u of cases) {
      const want = reference(u, rates.input, rates.cached, rates.output);
      expect(BigInt(p.actual(model("modelx-5.5"), TEXT_WORST, u, undefined))).toBe(want);
    }
  });

  test("partial config overrides one field and keeps the other defaults", () => {
    const p = pricer({ text: { "modelx-5.4-mini": { output_usd_per_mtok: "1" } } });
    // input keeps 0.10: 1e6 input → 0.1 USD; output now 1 USD/Mtok: 1e6 output → 1 USD.
    const cost = p.actual(
      model("modelx-5.4-mini"),
      TEXT_WORST,
      usage({ inputTokens: 1_000_000, outputTokens: 1_000_000 }),
      undefined,
    );
    expect<number>(cost).toBe(1_100_000_000);
  });

  test("unknown model ids and malformed prices in the config are rejected with their path", () => {
    const bad = v.safeParse(BillingSchema, { text: { "gpt-4": { input_usd_per_mtok: "1" } } });
    expect(bad.success).toBe(false);
    const neg = v.safeParse(BillingSchema, { text: { "modelx-5.5": { input_usd_per_mtok: "-1" } } });
    expect(neg.success).toBe(false);
  });
});

describe("image cost", () => {
  const IMAGES = { images: { "modelx-image-2": { high: { "1024x1024": "0.04", "1536x1024": "0.06" } } } };

  test("partial_images 3 bills four generations per image", () => {
    // n=2, partial_images=3 → 2 × (1 + 3) = 8 generations × 0.04 USD = 0.32 USD.
    const p = pricer(IMAGES);
    const worst = { kind: "image", generations: 8, quality: "high", size: "1024x1024" } as const;
    expect<number>(p.worstCase(model("modelx-image-2"), worst)).toBe(320_000_000);
    const actual = p.actual(model("modelx-image-2"), worst, usage({ generations: 8 }), {
      quality: "high",
      size: "1024x1024",
      partial_images: 6,
      images: 2,
    });
    expect<number>(actual).toBe(320_000_000);
  });

  test("settlement detail gives the size made; input_fidelity high applies the factor", () => {
    const p = pricer({ ...IMAGES, input_fidelity_high_factor: "1.5" });
    const worst = {
      kind: "image",
      generations: 1,
      quality: "high",
      size: "auto",
      inputFidelity: "high",
    } as const;
    // 1 × 0.06 × 1.5 = 0.09 USD.
    const cost = p.actual(model("modelx-image-2"), worst, usage({ generations: 1 }), {
      quality: "high",
      size: "1536x1024",
      input_fidelity: "high",
    });
    expect<number>(cost).toBe(90_000_000);
    expect(permille("1.5")).toBe(1500n);
    expect(permille("2")).toBe(2000n);
    expect(permille("1.125")).toBe(1125n);
  });

  test("defaults: modelx-image-1 costs half of image-2; auto quality and lenient sizes price as the largest high", () => {
    const p = pricer();
    const worst = (id: string, quality: string, size: string) =>
      Number(p.worstCase(model(id), { kind: "image", generations: 1, quality, size }));
    expect(worst("modelx-image-2", "low", "1024x1024")).toBe(4_000_000);
    expect(worst("modelx-image-1", "low", "1024x1024")).toBe(2_000_000);
    expect(worst("modelx-image-1.5", "medium", "1024x1024")).toBe(9_000_000);
    expect(worst("modelx-image-2", "auto", "auto")).toBe(60_000_000);
    expect(worst("modelx-image-2", "high", "800x600")).toBe(60_000_000);
  });
});

describe("settled through the meter", () => {
  let fx: Fixture;
  afterEach(async () => {
    await fx.close();
  });

  test("an interrupted stream settled with estimated usage is charged input plus delivered output", async () => {
    fx = await fixture({ billing: TEXT_PRICES });
    const input = {
      ...admitInput(fx.principal(), "modelx-5.5", { kind: "text", inputTokens: 120, maxOutputTokens: 4000 }),
      stream: true,
    };
    const admission = await fx.meter.admit(input);
    // Client went away after 37 output tokens; the upstream's usage never arrived.
    await admission.settle({
      status: 200,
      usage: usage({ inputTokens: 120, outputTokens: 37 }),
      source: "estimated",
      channels: ["sim"],
    });
    // 120 × 1.25e9 + 37 × 10e9 = 150e9 + 370e9 = 520e9 → 520,000 nanos.
    const record = await fx.store.usage.find(input.requestId);
    expect(record).toMatchObject({
      costNanos: 520_000,
      usageSource: "estimated",
      stream: true,
      outputTokens: 37,
    });
    expect(fx.events[0]?.usageSource).toBe("estimated");
  });
});
