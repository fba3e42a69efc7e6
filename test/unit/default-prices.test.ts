// The placeholder price tables (src/config/default-prices.ts): tsc checks their shape; this checks
// what a type cannot, that every model named is one of the catalog's of the right family and every
// amount reads as an exact USD amount (the gateway would price with it at start).
import { expect, test } from "bun:test";
import { parseUsd } from "../../src/base/money.ts";
import { type Family, MODELS } from "../../src/catalog/models.ts";
import {
  DEFAULT_AUDIO_PRICES,
  DEFAULT_EMBEDDING_PRICES,
  DEFAULT_IMAGE_SCALE,
  DEFAULT_IMAGE2_PRICES,
  DEFAULT_TEXT_PRICES,
} from "../../src/config/default-prices.ts";

const idsOf = (...families: Family[]) => MODELS.filter((m) => families.includes(m.family)).map((m) => m.id);

function expectUsd(amounts: Record<string, string>): void {
  for (const [field, text] of Object.entries(amounts)) {
    expect({ field, ok: parseUsd(text).ok }).toEqual({ field, ok: true });
  }
}

test("every default text price names a text or messages model and reads as USD", () => {
  const ids: string[] = idsOf("text", "messages");
  for (const [model, price] of Object.entries(DEFAULT_TEXT_PRICES)) {
    expect(ids).toContain(model);
    expectUsd(price);
  }
});

test("every default image price reads as USD, and each scale names an image model as a fraction", () => {
  for (const prices of Object.values(DEFAULT_IMAGE2_PRICES)) expectUsd(prices);
  const ids: string[] = idsOf("image");
  for (const [model, [numerator, denominator]] of Object.entries(DEFAULT_IMAGE_SCALE)) {
    expect(ids).toContain(model);
    expect(Number.isInteger(numerator) && numerator >= 1).toBe(true);
    expect(Number.isInteger(denominator) && denominator >= 1).toBe(true);
  }
});

test("every default embedding and audio price names a model of its family and reads as USD", () => {
  const embeddings: string[] = idsOf("embedding");
  for (const [model, price] of Object.entries(DEFAULT_EMBEDDING_PRICES)) {
    expect(embeddings).toContain(model);
    expectUsd({ input_usd_per_mtok: price });
  }
  const audio: string[] = idsOf("transcription", "speech");
  for (const [model, price] of Object.entries(DEFAULT_AUDIO_PRICES)) {
    expect(audio).toContain(model);
    expectUsd(price);
  }
});
