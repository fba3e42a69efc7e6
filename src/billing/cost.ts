// Prices → cost. The rounding rules (tested in test/unit/billing-cost.test.ts):
//
// 1. Configured prices are decimal USD with at most 9 decimals, so they convert exactly into
//    integer nano-USD (per million tokens, or per image generation). The input_fidelity factor has
//    at most 3 decimals and converts exactly into thousandths.
// 2. Text: exact = (plain input × input price + cached input × cached price + cache writes ×
//    write price + 1-hour cache writes × 1-hour write price + output × output price) / 1,000,000.
//    All products are summed exactly, then divided ONCE per request and rounded UP to a whole nano-USD: a request is never charged below its exact price and never more
//    than 1 nano-USD above it. The sum is taken in Numbers when it stays below 2^53 (then every
//    product and partial sum is exact, see `exactSum`), otherwise in bigints.
// 3. Images: exact = generations × price per generation × factor / 1000 (factor 1000 unless
//    input_fidelity is high), rounded up once per request the same way.
// 4. Totals (ledger, balance, spent today, `modelgate usage`) are exact integer sums of the
//    per-request costs; nothing is rounded again. USD strings are exact decimals of nano-USD.
// 5. Cached input (cache reads) and cache writes are parts of input (OpenAI convention): plain input
//    = input − reads − writes, each part capped at what is left of input (reads first, then
//    writes, then 1-hour writes), so no token is billed twice.
//    Reasoning tokens are part of output and billed at the output price; if an upstream reports
//    more reasoning than output tokens, the larger figure is billed.
// 6. The worst case (what admission reserves) prices every input token at the dearest input-side
//    rate (plain, cache read, cache write, 1-hour cache write), so no settled cost exceeds it.
// 7. Hosted tool calls (web search, file search, web fetch, image generation; code interpreter
//    containers): calls × price per call, exact nano-USD (prices have at most 9 decimals), added
//    to the text cost after its rounding. A code interpreter container costs its price per 1 GB
//    times its `memory_limit` in GB; a tool definition reserves its one container. An image generation call costs the generations it makes (1 + its tool's
//    `partial_images`) at the image price table's price for the quality and size its tool asks
//    for (`auto` at the dearest, rule 3's table), of the tool's catalog `model` or else
//    `[billing.tools] image_generation_model`. The worst case reserves each priced tool's cap
//    (Anthropic `max_uses`, else `reserve_calls`, for image generation `image_generation_reserve_calls`); a Responses
//    `max_tool_calls` caps all calls together, reserved at the dearest tools first. A request whose
//    upstream makes more calls than reserved is still charged every call at settlement, like any
//    cost above its reservation (the limiter debits the actual cost, ledger.ts).
// 8. Audio (transcription, speech): exact = audio ms × price per minute / 60,000 + (characters ×
//    price per million characters + audio input tokens × audio price + text input tokens × text
//    price + output tokens × output price + audio output tokens × audio output price) / 1,000,000,
//    summed exactly over the common denominator and rounded up once per request. The units come
//    from the settlement's `detail` (audio_ms, characters, audio_input_tokens, text_input_tokens,
//    output_tokens, audio_output_tokens); the worst case reserves the duration read from the
//    file, the input's characters, or a token bound.

import { nanos } from "../base/money.ts";
import type { Nanos } from "../base/types.ts";
import type { ModelInfo } from "../catalog/models.ts";
import { IMAGE_QUALITIES, IMAGE_SIZES, type ImageQuality, type ImageSize } from "../config/prices.ts";
import { PRICED_TOOLS, type PricedTool, type ToolCalls, type UsageCounts } from "../wire/usage-counts.ts";
import {
  type AudioUnits,
  type ImageToolFacts,
  NO_AUDIO,
  type ToolReserve,
  type WorstCase,
} from "./contract.ts";
import type { AudioPrice, ImagePrice, PriceTable, TextPrice } from "./prices.ts";

const MILLION = 1_000_000n;

function ceilDiv(numerator: bigint, denominator: bigint): bigint {
  return (numerator + denominator - 1n) / denominator;
}

/** A count as reported (an upstream may send a fraction or garbage): whole, never negative. */
function count(n: number): bigint {
  return Number.isFinite(n) && n > 0 ? BigInt(Math.ceil(n)) : 0n;
}

function toNanos(value: bigint): Nanos {
  return nanos(Number(value));
}

/** Image billing facts: what quality and size were made, and whether edits used high fidelity. */
export interface ImageFacts {
  quality: string;
  size: string;
  inputFidelity?: "low" | "high" | undefined;
}

/** The exact cost of text usage under rule 2. */
export function textCost(price: TextPrice, usage: UsageCounts): Nanos {
  return textCostIn(price, price.input, usage);
}

/**
 * Rule 2 with `input` as the plain input rate (the worst case passes the dearest input-side rate),
 * in Numbers when that is exact (no bigint per request on the common path), else in bigints.
 */
function textCostIn(price: TextPrice, input: bigint, usage: UsageCounts): Nanos {
  const exact = exactSum(price, input, usage);
  if (exact === undefined) return textCostBig(price, input, usage);
  const rest = exact % 1_000_000;
  return nanos((exact - rest) / 1_000_000 + (rest > 0 ? 1 : 0));
}

/** Whether a count or rate is a non-negative integer below 2^53 (a rate's Number is then exact). */
function safe(value: number | bigint): boolean {
  return Number.isSafeInteger(Number(value));
}

/** A count as a whole Number, like `count`; not a safe integer when the report is huge. */
function countNumber(n: number): number {
  return Number.isFinite(n) && n > 0 ? Math.ceil(n) : 0;
}

/**
 * Rule 2's sum before the division, in Numbers, or undefined when it would not be exact. Every
 * count and rate is a non-negative safe integer (checked), so a product or sum below 2^53 is
 * computed exactly, and one at or above 2^53 rounds to at least 2^53 (rounding is monotone and
 * 2^53 is representable) and never comes down again, since nothing negative is added: a final sum
 * that is a safe integer proves every step exact.
 */
function exactSum(price: TextPrice, input: bigint, usage: UsageCounts): number | undefined {
  const total = countNumber(usage.inputTokens);
  const reads = countNumber(usage.cachedInputTokens);
  const writes = countNumber(usage.cacheWriteTokens);
  const writes1h = countNumber(usage.cacheWrite1hTokens);
  const output = countNumber(Math.max(usage.outputTokens, usage.reasoningTokens));
  if (!(safe(total) && safe(reads) && safe(writes) && safe(writes1h) && safe(output))) return undefined;
  const { cachedInput, cacheWrite, cacheWrite1h } = price;
  if (!(safe(input) && safe(cachedInput) && safe(cacheWrite) && safe(cacheWrite1h) && safe(price.output)))
    return undefined;
  // Rule 5: reads, then writes, then 1-hour writes, each capped at what is left of input.
  const cached = Math.min(reads, total);
  const write = Math.min(writes, total - cached);
  const write1h = Math.min(writes1h, total - cached - write);
  const plain = total - cached - write - write1h;
  const sum =
    plain * Number(input) +
    cached * Number(cachedInput) +
    write * Number(cacheWrite) +
    write1h * Number(cacheWrite1h) +
    output * Number(price.output);
  return Number.isSafeInteger(sum) ? sum : undefined;
}

/** Rule 2 in bigints: sums of any size. */
function textCostBig(price: TextPrice, input: bigint, usage: UsageCounts): Nanos {
  let rest = count(usage.inputTokens);
  const part = (n: number): bigint => {
    let taken = count(n);
    if (taken > rest) taken = rest;
    rest -= taken;
    return taken;
  };
  const cached = part(usage.cachedInputTokens);
  const write = part(usage.cacheWriteTokens);
  const write1h = part(usage.cacheWrite1hTokens);
  const output = count(Math.max(usage.outputTokens, usage.reasoningTokens));
  const exact =
    rest * input +
    cached * price.cachedInput +
    write * price.cacheWrite +
    write1h * price.cacheWrite1h +
    output * price.output;
  return toNanos(ceilDiv(exact, MILLION));
}

/** Text cost plus hosted tool calls (rule 7, added after the text rounding). */
function withTools(tokens: Nanos, tools: bigint): Nanos {
  return tools === 0n ? tokens : toNanos(BigInt(tokens) + tools);
}

/** One image generation tool call: its generations at the image table's price (rule 7). */
function imageCallPrice(table: PriceTable, facts: ImageToolFacts): bigint {
  const price =
    (facts.model === undefined ? undefined : table.images.get(facts.model)) ??
    table.images.get(table.imageTool.model);
  if (price === undefined) return table.toolCalls.image_generation;
  return (1n + count(facts.partialImages)) * generationPrice(price, facts.quality, facts.size);
}

/** The price of one call (a container, for the code interpreter) of a tool entry (rule 7). */
function entryPrice(table: PriceTable, entry: ToolReserve["tools"][number]): bigint {
  if (entry.image !== undefined) return imageCallPrice(table, entry.image);
  if (entry.containerGb !== undefined) return table.toolCalls[entry.tool] * count(entry.containerGb);
  return table.toolCalls[entry.tool];
}

/** The price of one call of `tool` in a request that reserved `reserve`: its dearest entry's. */
function callPrice(table: PriceTable, tool: PricedTool, reserve: ToolReserve | undefined): bigint {
  let price: bigint | undefined;
  for (const entry of reserve?.tools ?? []) {
    if (entry.tool !== tool) continue;
    const p = entryPrice(table, entry);
    if (price === undefined || p > price) price = p;
  }
  return price ?? table.toolCalls[tool];
}

/** The exact cost of hosted tool calls under rule 7. */
export function toolCost(table: PriceTable, calls: ToolCalls | undefined, reserve?: ToolReserve): bigint {
  let total = 0n;
  if (calls === undefined) return total;
  for (const tool of PRICED_TOOLS) {
    const n = count(calls[tool] ?? 0);
    if (n > 0n) total += n * callPrice(table, tool, reserve);
  }
  return total;
}

/** The most the hosted tool calls of a request can cost (rule 7). */
export function toolWorstCase(table: PriceTable, reserve: ToolReserve | undefined): bigint {
  if (reserve === undefined) return 0n;
  const total = reserve.maxToolCalls;
  let left = total === undefined ? Number.POSITIVE_INFINITY : total;
  const price = (t: ToolReserve["tools"][number]) => entryPrice(table, t);
  const dearestFirst = [...reserve.tools].sort((a, b) =>
    price(b) > price(a) ? 1 : price(b) < price(a) ? -1 : 0,
  );
  let worst = 0n;
  for (const entry of dearestFirst) {
    const uncapped = entry.tool === "image_generation" ? table.imageTool.reserveCalls : table.reserveCalls;
    const cap = Math.min(left, entry.maxUses ?? total ?? uncapped);
    worst += count(cap) * price(entry);
    left -= cap;
  }
  return worst;
}

/** The price of one generation: unknown qualities/sizes (lenient sizes) are priced as `auto`. */
export function generationPrice(price: ImagePrice, quality: string, size: string): bigint {
  const q: ImageQuality = (IMAGE_QUALITIES as readonly string[]).includes(quality)
    ? (quality as ImageQuality)
    : "auto";
  const s: ImageSize = (IMAGE_SIZES as readonly string[]).includes(size) ? (size as ImageSize) : "auto";
  return price[q][s];
}

/** The exact cost of image generations under rule 3. */
export function imageCost(
  table: PriceTable,
  price: ImagePrice,
  generations: number,
  facts: ImageFacts,
): Nanos {
  const factor = facts.inputFidelity === "high" ? table.highFidelityPermille : 1000n;
  const exact = count(generations) * generationPrice(price, facts.quality, facts.size) * factor;
  return toNanos(ceilDiv(exact, 1000n));
}

/** Reads image facts from a settlement's `detail`, falling back to what admission was told. */
export function imageFacts(detail: Record<string, unknown> | undefined, fallback: ImageFacts): ImageFacts {
  const quality = typeof detail?.quality === "string" ? detail.quality : fallback.quality;
  const size = typeof detail?.size === "string" ? detail.size : fallback.size;
  const fidelity = detail?.input_fidelity ?? detail?.inputFidelity;
  const inputFidelity = fidelity === "high" || fidelity === "low" ? fidelity : fallback.inputFidelity;
  return { quality, size, inputFidelity };
}

/** The exact cost of audio under rule 8. */
export function audioCost(price: AudioPrice, units: AudioUnits): Nanos {
  const minutePart = count(units.audioMs) * price.perMinute * MILLION;
  const tokenPart =
    (count(units.audioInputTokens) * price.audioInput +
      count(units.textInputTokens) * price.textInput +
      count(units.outputTokens) * price.output +
      count(units.characters) * price.perMillionChars +
      count(units.audioOutputTokens) * price.audioOutput) *
    60_000n;
  return toNanos(ceilDiv(minutePart + tokenPart, 60_000n * MILLION));
}

/** Reads audio units from a settlement's `detail` (absent figures are 0). */
export function audioUnitsOf(detail: Record<string, unknown> | undefined): AudioUnits {
  const read = (name: string): number => {
    const value = detail?.[name];
    return typeof value === "number" ? value : 0;
  };
  if (detail === undefined) return NO_AUDIO;
  return {
    audioMs: read("audio_ms"),
    audioInputTokens: read("audio_input_tokens"),
    textInputTokens: read("text_input_tokens"),
    outputTokens: read("output_tokens"),
    characters: read("characters"),
    audioOutputTokens: read("audio_output_tokens"),
  };
}

/** Prices requests for one table; the meter holds one of these. */
export class Pricer {
  constructor(readonly table: PriceTable) {}

  /** The most a request can cost: what admission reserves. */
  worstCase(model: ModelInfo, worst: WorstCase): Nanos {
    if (worst.kind === "audio") {
      const price = this.table.audio.get(model.id);
      return price ? audioCost(price, worst.units) : nanos(0);
    }
    if (worst.kind === "image") {
      const price = this.table.images.get(model.id);
      if (!price) return nanos(0);
      return imageCost(this.table, price, worst.generations, worst);
    }
    const price = this.table.text.get(model.id);
    if (!price) return nanos(0);
    // Every input token priced at the dearest rate it can be billed at: a prompt written to a
    // 1-hour cache (Anthropic: 2× input) must not cost more than admission reserved.
    let dearest = price.input;
    if (price.cachedInput > dearest) dearest = price.cachedInput;
    if (price.cacheWrite > dearest) dearest = price.cacheWrite;
    if (price.cacheWrite1h > dearest) dearest = price.cacheWrite1h;
    const tokens = textCostIn(price, dearest, {
      inputTokens: worst.inputTokens,
      cachedInputTokens: 0,
      cacheWriteTokens: 0,
      cacheWrite1hTokens: 0,
      outputTokens: worst.maxOutputTokens,
      reasoningTokens: 0,
      generations: 0,
    });
    return withTools(tokens, toolWorstCase(this.table, worst.tools));
  }

  /** What a settled request costs. Image facts come from `detail`, else from admission. */
  actual(
    model: ModelInfo,
    worst: WorstCase,
    usage: UsageCounts,
    detail: Record<string, unknown> | undefined,
  ): Nanos {
    const audio = this.table.audio.get(model.id);
    if (audio) return audioCost(audio, audioUnitsOf(detail));
    const images = this.table.images.get(model.id);
    if (images) {
      const fallback: ImageFacts =
        worst.kind === "image" ? worst : { quality: "auto", size: "auto", inputFidelity: undefined };
      return imageCost(this.table, images, usage.generations, imageFacts(detail, fallback));
    }
    const text = this.table.text.get(model.id);
    const reserve = worst.kind === "text" ? worst.tools : undefined;
    return text ? withTools(textCost(text, usage), toolCost(this.table, usage.toolCalls, reserve)) : nanos(0);
  }
}
