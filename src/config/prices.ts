// The `[billing]` configuration section: prices per model, the billing day, default limits and the
// usage writer's batch window. Every text and image price default (default-prices.ts) is a
// PLACEHOLDER chosen to be small and round, not a vendor's list price: an operator sets real prices
// in the config file, e.g.
//
//   [billing.text."modelx-5.5"]
//   input_usd_per_mtok = "1.25"          # USD per million uncached input tokens
//   cached_input_usd_per_mtok = "0.125"  # USD per million cached input tokens
//   output_usd_per_mtok = "10"           # USD per million output tokens (reasoning included)
//   cache_write_usd_per_mtok = "1.5625"  # USD per million tokens written to the prompt cache
//                                        # (Anthropic's default 5-minute cache; OpenAI cache_write_tokens)
//   cache_write_1h_usd_per_mtok = "2.5"  # USD per million tokens written to Anthropic's 1-hour cache
//
//   [billing.images."modelx-image-2".high]
//   "1024x1024" = "0.167"                # USD per generation (a progress image is a generation)
//
// Prices given for a model replace only the fields given; the rest keep their defaults.
//
// Embedding models are priced per million input tokens (they produce no output tokens). Their
// defaults are the published list prices of the families the ids stand for ($0.13, $0.02 and
// $0.10 per million tokens for embed-3-large, embed-3-small and embed-2):
//
//   [billing.embeddings."modelx-embed-3-small"]
//   input_usd_per_mtok = "0.02"
//
// Audio models are priced in their own units, defaults again the published list prices: per
// minute of audio (modelx-transcribe-1: $0.006), or per million tokens of audio input, text input
// and output (modelx-transcribe-4o: $6, $2.50, $10; 4o-mini: $3, $1.25, $5):
//
//   [billing.audio."modelx-transcribe-1"]
//   usd_per_minute = "0.006"
//   [billing.audio."modelx-transcribe-4o"]
//   audio_input_usd_per_mtok = "6"
//   input_usd_per_mtok = "2.5"          # text input (the prompt)
//   output_usd_per_mtok = "10"
//
// Speech: per million characters of input (modelx-tts-1: $15, -1-hd: $30), or per million tokens
// of text input and audio output (modelx-tts-4o-mini: $0.60 and $12):
//
//   [billing.audio."modelx-tts-1"]
//   usd_per_mchar = "15"
//   [billing.audio."modelx-tts-4o-mini"]
//   input_usd_per_mtok = "0.6"
//   audio_output_usd_per_mtok = "12"
//
// Hosted (server-side) tools the upstream runs and bills per call are priced in `[billing.tools]`.
// Unlike the token placeholders, their defaults are the providers' list prices at the time of
// writing (OpenAI: web search $10 and file search $2.50 per 1,000 calls; Anthropic: web search $10
// per 1,000 searches, web fetch no charge beyond its tokens), because they do not depend on the
// model; the Responses image generation tool is priced per image it makes from the image price
// table (`image_generation_model`, at the quality and size the tool asks for); the Responses code
// interpreter per container (OpenAI: $0.03 for 1 GB, in proportion to `memory_limit`); Anthropic
// code execution is billed by container hours, which no answer reports, so it is refused unless
// `allow_unpriced` is set (src/pipeline/forwarding.ts):
//
//   [billing.tools]
//   web_search_usd_per_call = "0.01"     # Responses web_search(_preview) calls, Anthropic web searches
//   file_search_usd_per_call = "0.0025"  # Responses file_search calls
//   web_fetch_usd_per_call = "0"         # Anthropic web fetches
//   code_interpreter_usd_per_container = "0.03"  # Responses code interpreter, per 1 GB container
//   reserve_calls = 5                    # calls reserved per priced tool without max_tool_calls / max_uses
//   image_generation_model = "modelx-image-1"  # prices image generation tool calls
//   image_generation_reserve_calls = 1   # image generation calls reserved without max_tool_calls
//   allow_unpriced = false               # forward hosted tools with charges the gateway cannot count
import * as v from "valibot";
import { MODELS } from "../catalog/models.ts";
import { usdText, wholeNumber } from "./blocks.ts";

const Usd = usdText("with at most 9 decimals, such as 10 or 0.125");

const TextPriceSchema = v.strictObject({
  input_usd_per_mtok: v.optional(Usd),
  cached_input_usd_per_mtok: v.optional(Usd),
  output_usd_per_mtok: v.optional(Usd),
  cache_write_usd_per_mtok: v.optional(Usd),
  cache_write_1h_usd_per_mtok: v.optional(Usd),
});

/** A text model's `[billing.text.MODEL]` prices as configured (each field optional). */
export type TextPriceConfig = v.InferOutput<typeof TextPriceSchema>;

export const IMAGE_QUALITIES = ["low", "medium", "high", "auto"] as const;
export const IMAGE_SIZES = ["1024x1024", "1536x1024", "1024x1536", "auto"] as const;
export type ImageQuality = (typeof IMAGE_QUALITIES)[number];
export type ImageSize = (typeof IMAGE_SIZES)[number];

const SizePrices = v.strictObject({
  "1024x1024": v.optional(Usd),
  "1536x1024": v.optional(Usd),
  "1024x1536": v.optional(Usd),
  auto: v.optional(Usd),
});

const ImagePriceSchema = v.strictObject({
  low: v.optional(SizePrices),
  medium: v.optional(SizePrices),
  high: v.optional(SizePrices),
  auto: v.optional(SizePrices),
});

const idsOf = (families: string[]) => MODELS.filter((m) => families.includes(m.family)).map((m) => m.id);
const TEXT_IDS: readonly string[] = idsOf(["text", "messages"]);
const IMAGE_IDS: readonly string[] = idsOf(["image"]);
const EMBEDDING_IDS: readonly string[] = idsOf(["embedding"]);

const EmbeddingPriceSchema = v.strictObject({ input_usd_per_mtok: v.optional(Usd) });
const AUDIO_IDS: readonly string[] = idsOf(["transcription", "speech"]);

const AudioPriceSchema = v.strictObject({
  usd_per_minute: v.optional(Usd),
  audio_input_usd_per_mtok: v.optional(Usd),
  input_usd_per_mtok: v.optional(Usd),
  output_usd_per_mtok: v.optional(Usd),
  usd_per_mchar: v.optional(Usd),
  audio_output_usd_per_mtok: v.optional(Usd),
});

export type AudioPriceConfig = v.InferOutput<typeof AudioPriceSchema>;

function modelRecord<S extends v.GenericSchema>(ids: readonly string[], schema: S, family: string) {
  return v.record(
    v.pipe(
      v.string(),
      v.check(
        (id) => ids.includes(id),
        (issue) => `"${String(issue.input)}" is not a ${family} model id; use one of ${ids.join(", ")}`,
      ),
    ),
    schema,
  );
}

/** A decimal factor with at most 3 decimals, e.g. 1.5; kept as text so it converts exactly. */
const Factor = v.pipe(
  v.union([v.string(), v.number()]),
  v.transform(String),
  v.regex(/^\d{1,3}(\.\d{1,3})?$/, "expected a factor such as 1.5 (at most 3 decimals)"),
);

const ToolsSchema = v.strictObject({
  web_search_usd_per_call: v.optional(Usd, "0.01"),
  file_search_usd_per_call: v.optional(Usd, "0.0025"),
  web_fetch_usd_per_call: v.optional(Usd, "0"),
  /** A Responses code interpreter container of 1 GB; a larger `memory_limit` costs as many times more. */
  code_interpreter_usd_per_container: v.optional(Usd, "0.03"),
  /**
   * Calls admission reserves for each priced tool in a request that caps them neither by
   * `max_tool_calls` (Responses) nor by the tool's `max_uses` (Anthropic).
   */
  reserve_calls: v.optional(wholeNumber(0, 1000), 5),
  /**
   * The image model whose `[billing.images]` prices price the Responses image generation tool when
   * its definition names no catalog image model (OpenAI's tool defaults to gpt-image-1).
   */
  image_generation_model: v.optional(
    v.picklist(IMAGE_IDS, `expected one of the image models: ${IMAGE_IDS.join(", ")}`),
    "modelx-image-1",
  ),
  /** Image generation calls reserved for a request that does not cap them by `max_tool_calls`. */
  image_generation_reserve_calls: v.optional(wholeNumber(0, 100), 1),
  /** Forward hosted tools whose charges the gateway cannot count (code interpreter, …) unbilled. */
  allow_unpriced: v.optional(v.boolean(), false),
});

export type ToolsConfig = v.InferOutput<typeof ToolsSchema>;

/** A tokens-per-minute limit: a whole number of tokens, at least 1. */
const Tpm = v.pipe(
  v.number("expected a whole number of tokens per minute"),
  v.integer("expected a whole number of tokens per minute"),
  v.minValue(1, "must be at least 1 token per minute; leave the entry out for no limit"),
);

/**
 * Tokens per minute for keys without their own (`keys create --tpm`): the key's group's, else the
 * default; and per account, all its keys together.
 */
const TpmSchema = v.strictObject({
  /** For keys without their own and whose group has none; 0 = no limit. */
  default: v.optional(
    v.pipe(
      v.number("expected a whole number of tokens per minute"),
      v.integer("expected a whole number of tokens per minute"),
      v.minValue(0, "must be 0 (no limit) or more"),
    ),
    0,
  ),
  /** Per group name. */
  groups: v.optional(v.record(v.pipe(v.string(), v.minLength(1)), Tpm), {}),
  /** Per account name: every key of the account together. */
  accounts: v.optional(v.record(v.pipe(v.string(), v.minLength(1)), Tpm), {}),
});

/** Whether `zone` is a time zone this runtime knows (an IANA name). */
function knownTimeZone(zone: string): boolean {
  // The default needs no check: an Intl.DateTimeFormat with a time zone loads ICU's zone and
  // locale data (~3.5 MB resident at start, measured), which a UTC calendar never uses.
  if (zone === "UTC") return true;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/**
 * The calendar of budget periods and when owners are told (`[billing.budgets]`): the time zone
 * the daily, weekly and monthly periods follow, the day weeks start, the day months reset, and the
 * percentages of a budget at which a notification is sent (once per period each).
 */
const BudgetsConfigSchema = v.strictObject({
  time_zone: v.optional(
    v.pipe(
      v.string('expected an IANA time zone such as "UTC" or "Europe/Berlin"'),
      v.check(
        knownTimeZone,
        (issue) => `unknown time zone "${String(issue.input)}"; use an IANA name such as "Europe/Berlin"`,
      ),
    ),
    "UTC",
  ),
  week_start: v.optional(
    v.picklist(
      ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"],
      "expected a day of the week such as monday",
    ),
    "monday",
  ),
  month_reset_day: v.optional(
    v.pipe(
      v.number("expected a day of the month from 1 to 28"),
      v.integer("expected a day of the month from 1 to 28"),
      v.minValue(1, "expected a day of the month from 1 to 28"),
      v.maxValue(28, "expected a day from 1 to 28 (every month has it)"),
    ),
    1,
  ),
  notify_at_percent: v.optional(
    v.pipe(
      v.array(
        v.pipe(
          v.number("expected whole percentages such as [80, 100]"),
          v.integer("expected whole percentages such as [80, 100]"),
          v.minValue(1, "expected percentages from 1 to 100"),
          v.maxValue(100, "expected percentages from 1 to 100"),
        ),
      ),
    ),
    [80, 100],
  ),
});

export const BillingSchema = v.strictObject({
  /** The billing day (daily caps) starts at 00:00 at this offset from UTC, in minutes; 0 = UTC. */
  day_utc_offset_minutes: v.optional(wholeNumber(-720, 840), 0),
  /** Requests per minute for keys without their own --rpm. */
  default_rpm: v.optional(wholeNumber(1), 1_000_000),
  /** Concurrent requests for keys without their own --concurrency; 0 means no limit. */
  default_concurrency: v.optional(wholeNumber(0), 0),
  /** Tokens per minute: group defaults and account limits (`[billing.tpm]`). */
  tpm: v.optional(TpmSchema, {}),
  /** Budget periods' calendar and notification thresholds (`[billing.budgets]`). */
  budgets: v.optional(BudgetsConfigSchema, {}),
  /**
   * How long the usage writer holds a batch's first record for company, in ms. 0 (default): classic
   * group commit — commit at once when idle, batch whatever queues while a commit runs.
   */
  commit_window_ms: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(100)), 0),
  /** Price multiplier for image edits with input_fidelity high. */
  input_fidelity_high_factor: v.optional(Factor, "1.5"),
  text: v.optional(modelRecord(TEXT_IDS, TextPriceSchema, "text or messages"), {}),
  images: v.optional(modelRecord(IMAGE_IDS, ImagePriceSchema, "image"), {}),
  embeddings: v.optional(modelRecord(EMBEDDING_IDS, EmbeddingPriceSchema, "embedding"), {}),
  audio: v.optional(modelRecord(AUDIO_IDS, AudioPriceSchema, "audio"), {}),
  tools: v.optional(ToolsSchema, {}),
});

export type BillingConfig = v.InferOutput<typeof BillingSchema>;
