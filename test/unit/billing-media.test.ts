// Prices → cost for the media models against hand-computed figures (src/billing/cost.ts rules 2
// and 8): embeddings per input token; transcription per minute (a part of a second rounds the
// request up once, never per unit) and per token kind; speech per character and per token; the
// worst case never below the settlement of the same units; configured prices override defaults.
import { describe, expect, test } from "bun:test";
import * as v from "valibot";
import { type AudioUnits, NO_AUDIO, NO_USAGE } from "../../src/billing/contract.ts";
import { audioCost, audioUnitsOf, Pricer } from "../../src/billing/cost.ts";
import { buildPriceTable } from "../../src/billing/prices.ts";
import { BillingSchema } from "../../src/config/prices.ts";
import { mid } from "../helpers/ids.ts";
import { model } from "./billing-fixture.ts";

function pricer(billing: Record<string, unknown> = {}): Pricer {
  return new Pricer(buildPriceTable(v.parse(BillingSchema, billing)));
}

const detailOf = (u: Partial<AudioUnits>) => {
  const all = { ...NO_AUDIO, ...u };
  return {
    audio_ms: all.audioMs,
    audio_input_tokens: all.audioInputTokens,
    text_input_tokens: all.textInputTokens,
    output_tokens: all.outputTokens,
    characters: all.characters,
    audio_output_tokens: all.audioOutputTokens,
  };
};

describe("embeddings", () => {
  test("input tokens at the published price; nothing for output", () => {
    // modelx-embed-3-large: $0.13 / M = 130 nano-USD a token; 1,001 tokens = 130,130.
    const p = pricer();
    const worst = { kind: "text", inputTokens: 1001, maxOutputTokens: 0 } as const;
    expect<number>(p.worstCase(model("modelx-embed-3-large"), worst)).toBe(130_130);
    expect<number>(
      p.actual(model("modelx-embed-3-large"), worst, { ...NO_USAGE, inputTokens: 1001 }, undefined),
    ).toBe(130_130);
  });

  test("a fraction of a nano-USD rounds the request up once", () => {
    // $0.02 / M: 7 tokens = 140 exactly; a price of $0.015 / M: 7 tokens = 105; $0.0155: 108.5 → 109.
    const p = pricer({ embeddings: { "modelx-embed-3-small": { input_usd_per_mtok: "0.0155" } } });
    const worst = { kind: "text", inputTokens: 7, maxOutputTokens: 0 } as const;
    expect<number>(
      p.actual(model("modelx-embed-3-small"), worst, { ...NO_USAGE, inputTokens: 7 }, undefined),
    ).toBe(109);
  });
});

describe("speech to text", () => {
  test("per minute: $0.006 a minute is 100,000 nano-USD a second; 1 ms more rounds up once", () => {
    const p = pricer();
    const m = model("modelx-transcribe-1");
    const units = { ...NO_AUDIO, audioMs: 5000 };
    expect<number>(p.worstCase(m, { kind: "audio", units })).toBe(500_000);
    expect<number>(p.actual(m, { kind: "audio", units }, NO_USAGE, detailOf({ audioMs: 5001 }))).toBe(
      500_100,
    );
  });

  test("per token: audio, text and output tokens each at their price", () => {
    // 4o: $6 audio, $2.50 text, $10 output per M: 42 × 6000 + 3 × 2500 + 17 × 10000 = 429,500.
    const p = pricer();
    const units = { ...NO_AUDIO, audioInputTokens: 42, textInputTokens: 3, outputTokens: 17 };
    const cost = p.actual(model("modelx-transcribe-4o"), { kind: "audio", units }, NO_USAGE, detailOf(units));
    expect<number>(cost).toBe(429_500);
  });

  test("configured prices replace the defaults field by field", () => {
    const p = pricer({ audio: { "modelx-transcribe-4o": { output_usd_per_mtok: "20" } } });
    const units = { ...NO_AUDIO, audioInputTokens: 1, outputTokens: 1 };
    expect<number>(p.worstCase(model("modelx-transcribe-4o"), { kind: "audio", units })).toBe(6000 + 20_000);
  });
});

describe("speech", () => {
  test("per character: $15 a million characters; tokens: $0.60 text in, $12 audio out", () => {
    const p = pricer();
    const chars = { ...NO_AUDIO, characters: 4096 };
    expect<number>(
      p.actual(model("modelx-tts-1"), { kind: "audio", units: chars }, NO_USAGE, detailOf(chars)),
    ).toBe(61_440_000);
    expect<number>(p.worstCase(model("modelx-tts-1-hd"), { kind: "audio", units: chars })).toBe(122_880_000);
    const tokens = { ...NO_AUDIO, textInputTokens: 7, audioOutputTokens: 36 };
    const cost = p.actual(
      model("modelx-tts-4o-mini"),
      { kind: "audio", units: tokens },
      NO_USAGE,
      detailOf(tokens),
    );
    expect<number>(cost).toBe(7 * 600 + 36 * 12_000);
  });

  test("a settlement with no units in its detail costs nothing; absent figures read as 0", () => {
    expect(audioUnitsOf(undefined)).toEqual(NO_AUDIO);
    expect(audioUnitsOf({ characters: 3 })).toEqual({ ...NO_AUDIO, characters: 3 });
    const price = buildPriceTable(v.parse(BillingSchema, {})).audio.get(mid("modelx-tts-1"));
    if (price === undefined) throw new Error("no price");
    expect<number>(audioCost(price, NO_AUDIO)).toBe(0);
  });
});
