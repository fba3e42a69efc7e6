// The default prices every model starts from before `[billing]` (src/config/prices.ts) overrides
// them field by field. Each text and image price is a PLACEHOLDER chosen to be small and round, not
// a vendor's list price; the embedding and audio prices are the published list prices of the
// families their ids stand for. tsc checks the tables' shape (every price field of the config, each a
// decimal text); test/unit/default-prices.test.ts checks that each model id is in the catalog and
// each amount reads as a USD amount.
import type { AudioPriceConfig, ImageSize, TextPriceConfig } from "./prices.ts";

/** A USD amount as decimal text ("0.125"), read exactly by parseUsd. */
type UsdText = `${number}`;

/** A text model's default price: every field of `[billing.text.MODEL]`, in USD per million tokens. */
export type TextPriceDefaults = { readonly [K in keyof TextPriceConfig]-?: UsdText };

/**
 * Placeholder text prices, USD per million tokens. The modelz (Anthropic-style) models follow
 * Anthropic's published ratios to the input price: cache read 0.1×, 5-minute cache write 1.25×,
 * 1-hour cache write 2×. The modelx (OpenAI-style) models bill no cache-write premium: a write
 * costs the input price.
 */
export const DEFAULT_TEXT_PRICES: Readonly<Record<string, TextPriceDefaults>> = {
  "modelx-5.5": {
    input_usd_per_mtok: "0.50",
    cached_input_usd_per_mtok: "0.05",
    output_usd_per_mtok: "2.00",
    cache_write_usd_per_mtok: "0.50",
    cache_write_1h_usd_per_mtok: "0.50",
  },
  "modelx-5.4": {
    input_usd_per_mtok: "0.40",
    cached_input_usd_per_mtok: "0.04",
    output_usd_per_mtok: "1.60",
    cache_write_usd_per_mtok: "0.40",
    cache_write_1h_usd_per_mtok: "0.40",
  },
  "modelx-5.4-mini": {
    input_usd_per_mtok: "0.10",
    cached_input_usd_per_mtok: "0.01",
    output_usd_per_mtok: "0.40",
    cache_write_usd_per_mtok: "0.10",
    cache_write_1h_usd_per_mtok: "0.10",
  },
  "modelx-5.3-c": {
    input_usd_per_mtok: "0.30",
    cached_input_usd_per_mtok: "0.03",
    output_usd_per_mtok: "1.20",
    cache_write_usd_per_mtok: "0.30",
    cache_write_1h_usd_per_mtok: "0.30",
  },
  "modelx-5.3-c-spark": {
    input_usd_per_mtok: "0.05",
    cached_input_usd_per_mtok: "0.005",
    output_usd_per_mtok: "0.20",
    cache_write_usd_per_mtok: "0.05",
    cache_write_1h_usd_per_mtok: "0.05",
  },
  "modelx-5.2": {
    input_usd_per_mtok: "0.25",
    cached_input_usd_per_mtok: "0.025",
    output_usd_per_mtok: "1.00",
    cache_write_usd_per_mtok: "0.25",
    cache_write_1h_usd_per_mtok: "0.25",
  },
  "modelz-opus-4-7": {
    input_usd_per_mtok: "0.60",
    cached_input_usd_per_mtok: "0.06",
    output_usd_per_mtok: "2.40",
    cache_write_usd_per_mtok: "0.75",
    cache_write_1h_usd_per_mtok: "1.20",
  },
  "modelz-opus-4-6": {
    input_usd_per_mtok: "0.60",
    cached_input_usd_per_mtok: "0.06",
    output_usd_per_mtok: "2.40",
    cache_write_usd_per_mtok: "0.75",
    cache_write_1h_usd_per_mtok: "1.20",
  },
  "modelz-opus-4-5-20251101": {
    input_usd_per_mtok: "0.50",
    cached_input_usd_per_mtok: "0.05",
    output_usd_per_mtok: "2.00",
    cache_write_usd_per_mtok: "0.625",
    cache_write_1h_usd_per_mtok: "1.00",
  },
  "modelz-sonnet-4-6": {
    input_usd_per_mtok: "0.30",
    cached_input_usd_per_mtok: "0.03",
    output_usd_per_mtok: "1.20",
    cache_write_usd_per_mtok: "0.375",
    cache_write_1h_usd_per_mtok: "0.60",
  },
  "modelz-sonnet-4-5-20250929": {
    input_usd_per_mtok: "0.30",
    cached_input_usd_per_mtok: "0.03",
    output_usd_per_mtok: "1.20",
    cache_write_usd_per_mtok: "0.375",
    cache_write_1h_usd_per_mtok: "0.60",
  },
  "modelz-haiku-4-5-20251001": {
    input_usd_per_mtok: "0.10",
    cached_input_usd_per_mtok: "0.01",
    output_usd_per_mtok: "0.40",
    cache_write_usd_per_mtok: "0.125",
    cache_write_1h_usd_per_mtok: "0.20",
  },
};

/** One quality's default prices by size; `auto` size is priced as the largest. */
export type SizePriceDefaults = Readonly<Record<Exclude<ImageSize, "auto">, UsdText>>;

/**
 * Placeholder image prices in USD per generation for modelx-image-2, by quality then size; `auto`
 * quality is priced as high.
 */
export const DEFAULT_IMAGE2_PRICES = {
  low: { "1024x1024": "0.004", "1536x1024": "0.006", "1024x1536": "0.006" },
  medium: { "1024x1024": "0.012", "1536x1024": "0.018", "1024x1536": "0.018" },
  high: { "1024x1024": "0.040", "1536x1024": "0.060", "1024x1536": "0.060" },
} as const satisfies Readonly<Record<"low" | "medium" | "high", SizePriceDefaults>>;

/** Each image model's price as a fraction of modelx-image-2's: 1.5 costs 3/4, 1 half. */
export const DEFAULT_IMAGE_SCALE: Readonly<
  Record<string, readonly [numerator: number, denominator: number]>
> = {
  "modelx-image-2": [1, 1],
  "modelx-image-1.5": [3, 4],
  "modelx-image-1": [1, 2],
};

/** Embedding prices, USD per million input tokens (embed-3-large, embed-3-small, embed-2). */
export const DEFAULT_EMBEDDING_PRICES: Readonly<Record<string, UsdText>> = {
  "modelx-embed-3-large": "0.13",
  "modelx-embed-3-small": "0.02",
  "modelx-embed-2": "0.10",
};

/**
 * Audio prices in their units: per minute of audio, per million tokens of audio input, text input
 * and output (transcription), per million characters or tokens (speech).
 */
export const DEFAULT_AUDIO_PRICES: Readonly<
  Record<string, { readonly [K in keyof AudioPriceConfig]?: UsdText }>
> = {
  "modelx-transcribe-1": { usd_per_minute: "0.006" },
  "modelx-transcribe-4o": {
    audio_input_usd_per_mtok: "6",
    input_usd_per_mtok: "2.5",
    output_usd_per_mtok: "10",
  },
  "modelx-transcribe-4o-mini": {
    audio_input_usd_per_mtok: "3",
    input_usd_per_mtok: "1.25",
    output_usd_per_mtok: "5",
  },
  "modelx-tts-1": { usd_per_mchar: "15" },
  "modelx-tts-1-hd": { usd_per_mchar: "30" },
  "modelx-tts-4o-mini": { input_usd_per_mtok: "0.6", audio_output_usd_per_mtok: "12" },
};
