// The runtime price table: the `[billing]` configuration merged over the placeholder defaults and
// converted once, at start, into exact integers (nano-USD per million tokens, nano-USD per image
// generation, nano-USD per hosted tool call, a per-mille factor), so pricing a request never parses
// or uses floats.

import { parseUsd } from "../base/money.ts";
import { type ModelId, toModelId } from "../base/types.ts";
import { MODELS } from "../catalog/models.ts";
import {
  DEFAULT_AUDIO_PRICES,
  DEFAULT_EMBEDDING_PRICES,
  DEFAULT_IMAGE_SCALE,
  DEFAULT_IMAGE2_PRICES,
  DEFAULT_TEXT_PRICES,
  type SizePriceDefaults,
  type TextPriceDefaults,
} from "../config/default-prices.ts";
import {
  type BillingConfig,
  IMAGE_QUALITIES,
  IMAGE_SIZES,
  type ImageQuality,
  type ImageSize,
} from "../config/prices.ts";
import type { PricedTool } from "../wire/usage-counts.ts";

/** Nano-USD per one million tokens (embedding models: the input price in every input field, output 0). */
export interface TextPrice {
  input: bigint;
  cachedInput: bigint;
  output: bigint;
  /** Input written to a prompt cache of the default lifetime (Anthropic: 5 minutes). */
  cacheWrite: bigint;
  /** Input written to a 1-hour prompt cache. */
  cacheWrite1h: bigint;
}

/** Nano-USD per generation, by quality then size. */
export type ImagePrice = Record<ImageQuality, Record<ImageSize, bigint>>;

/**
 * Nano-USD per minute of audio, per million characters, and per million tokens of each kind (0
 * where not billed).
 */
export interface AudioPrice {
  perMinute: bigint;
  perMillionChars: bigint;
  audioInput: bigint;
  textInput: bigint;
  output: bigint;
  audioOutput: bigint;
}

export interface PriceTable {
  text: ReadonlyMap<ModelId, TextPrice>;
  images: ReadonlyMap<ModelId, ImagePrice>;
  /** Transcription and speech models, priced per minute, per character or per token kind. */
  audio: ReadonlyMap<ModelId, AudioPrice>;
  /** Multiplier for `input_fidelity: high`, in thousandths (1500 = ×1.5). */
  highFidelityPermille: bigint;
  /** Nano-USD per call of each priced hosted tool. */
  toolCalls: Readonly<Record<PricedTool, bigint>>;
  /** Calls reserved per priced tool a request does not cap (`[billing.tools] reserve_calls`). */
  reserveCalls: number;
  /** The image generation tool: the image model that prices its calls, and calls reserved uncapped. */
  imageTool: { model: ModelId; reserveCalls: number };
}

function usd(text: string): bigint {
  const parsed = parseUsd(text);
  if (!parsed.ok) throw new RangeError(parsed.message);
  return BigInt(parsed.value);
}

/** `1.5` → 1500n: a decimal with at most 3 decimals as exact thousandths. */
export function permille(text: string): bigint {
  const [whole = "0", fraction = ""] = text.split(".");
  return BigInt(whole) * 1000n + BigInt(fraction.padEnd(3, "0").slice(0, 3));
}

function defaultImagePrice(model: string): ImagePrice {
  const [num, den] = DEFAULT_IMAGE_SCALE[model] ?? [1, 1];
  const scale = (text: string) => (usd(text) * BigInt(num)) / BigInt(den);
  const row = (prices: SizePriceDefaults): Record<ImageSize, bigint> => {
    const square = scale(prices["1024x1024"]);
    const landscape = scale(prices["1536x1024"]);
    const portrait = scale(prices["1024x1536"]);
    let largest = square;
    for (const price of [landscape, portrait]) if (price > largest) largest = price;
    return { "1024x1024": square, "1536x1024": landscape, "1024x1536": portrait, auto: largest };
  };
  const high = row(DEFAULT_IMAGE2_PRICES.high);
  return {
    low: row(DEFAULT_IMAGE2_PRICES.low),
    medium: row(DEFAULT_IMAGE2_PRICES.medium),
    high,
    auto: { ...high },
  };
}

/** A text model with no default price costs nothing until `[billing.text]` prices it. */
const UNPRICED_TEXT: TextPriceDefaults = {
  input_usd_per_mtok: "0",
  cached_input_usd_per_mtok: "0",
  output_usd_per_mtok: "0",
  cache_write_usd_per_mtok: "0",
  cache_write_1h_usd_per_mtok: "0",
};

/** Builds the table every request is priced from; configured fields override defaults one by one. */
export function buildPriceTable(config: BillingConfig): PriceTable {
  const text = new Map<ModelId, TextPrice>();
  const images = new Map<ModelId, ImagePrice>();
  const audio = new Map<ModelId, AudioPrice>();
  for (const model of MODELS) {
    if (model.family === "image") {
      const price = defaultImagePrice(model.id);
      const configured = config.images[model.id] ?? {};
      for (const quality of IMAGE_QUALITIES) {
        for (const size of IMAGE_SIZES) {
          const given = configured[quality]?.[size];
          if (given !== undefined) price[quality][size] = usd(given);
        }
      }
      images.set(model.id, price);
    } else if (model.family === "transcription" || model.family === "speech") {
      const given = { ...DEFAULT_AUDIO_PRICES[model.id], ...config.audio[model.id] };
      audio.set(model.id, {
        perMinute: usd(given.usd_per_minute ?? "0"),
        perMillionChars: usd(given.usd_per_mchar ?? "0"),
        audioInput: usd(given.audio_input_usd_per_mtok ?? "0"),
        textInput: usd(given.input_usd_per_mtok ?? "0"),
        output: usd(given.output_usd_per_mtok ?? "0"),
        audioOutput: usd(given.audio_output_usd_per_mtok ?? "0"),
      });
    } else if (model.family === "embedding") {
      // Input only: every input-side rate is the input price, output is free (none is produced).
      const input = usd(
        config.embeddings[model.id]?.input_usd_per_mtok ?? DEFAULT_EMBEDDING_PRICES[model.id] ?? "0",
      );
      text.set(model.id, { input, cachedInput: input, output: 0n, cacheWrite: input, cacheWrite1h: input });
    } else {
      const defaults = DEFAULT_TEXT_PRICES[model.id] ?? UNPRICED_TEXT;
      const configured = config.text[model.id] ?? {};
      text.set(model.id, {
        input: usd(configured.input_usd_per_mtok ?? defaults.input_usd_per_mtok),
        cachedInput: usd(configured.cached_input_usd_per_mtok ?? defaults.cached_input_usd_per_mtok),
        output: usd(configured.output_usd_per_mtok ?? defaults.output_usd_per_mtok),
        cacheWrite: usd(configured.cache_write_usd_per_mtok ?? defaults.cache_write_usd_per_mtok),
        cacheWrite1h: usd(configured.cache_write_1h_usd_per_mtok ?? defaults.cache_write_1h_usd_per_mtok),
      });
    }
  }
  const tools = config.tools;
  const imageToolModel = toModelId(tools.image_generation_model);
  return {
    text,
    images,
    audio,
    highFidelityPermille: permille(config.input_fidelity_high_factor),
    toolCalls: {
      web_search: usd(tools.web_search_usd_per_call),
      file_search: usd(tools.file_search_usd_per_call),
      web_fetch: usd(tools.web_fetch_usd_per_call),
      // A call whose request gave no facts (never from the text path): the dearest generation.
      image_generation: images.get(imageToolModel)?.auto.auto ?? 0n,
      code_interpreter: usd(tools.code_interpreter_usd_per_container),
    },
    reserveCalls: tools.reserve_calls,
    imageTool: { model: imageToolModel, reserveCalls: tools.image_generation_reserve_calls },
  };
}
