// The Images wire: request fields of POST /v1/images/generations and /v1/images/edits, parsed by
// valibot into one domain shape (`ImageOptions`). Field errors name the field; a numeric value
// outside its range is 422 (docs/design.md), any other violation 400 (the one decode step, decode.ts).
import * as v from "valibot";
import { GatewayError } from "./errors.ts";

export const MAX_PROMPT_CHARS = 32_000;
export const STANDARD_SIZES = ["1024x1024", "1536x1024", "1024x1536"] as const;
/** Lenient `WxH` sizes: each side within these bounds (the output size is not guaranteed). */
export const MIN_SIDE = 16;
export const MAX_SIDE = 4096;

const SIZE = /^(\d{1,5})x(\d{1,5})$/;

/** `{width, height}` of a `WxH` size string, or undefined when it is not one within bounds. */
export function parseSize(size: string): { width: number; height: number } | undefined {
  const match = SIZE.exec(size);
  if (!match) return undefined;
  const width = Number(match[1]);
  const height = Number(match[2]);
  const ok = (side: number) => side >= MIN_SIDE && side <= MAX_SIDE;
  return ok(width) && ok(height) ? { width, height } : undefined;
}

const Prompt = v.pipe(
  v.string((i) => (i.input === undefined ? "is required: describe the image to make" : "must be a string")),
  v.check((s) => s.trim().length > 0, "must not be empty: describe the image to make"),
  v.check(
    (s) => s.length <= MAX_PROMPT_CHARS || codePoints(s) <= MAX_PROMPT_CHARS,
    (i) => `is ${codePoints(String(i.input))} characters long; shorten it to at most ${MAX_PROMPT_CHARS}`,
  ),
);

/** Characters as the prompt limit counts them: Unicode code points (an emoji is one, not two UTF-16 units). */
export function codePoints(text: string): number {
  let count = text.length;
  for (let i = 0; i < text.length - 1; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        count--;
        i++;
      }
    }
  }
  return count;
}

const Size = v.pipe(
  v.string(),
  v.check(
    (s) => s === "auto" || parseSize(s) !== undefined,
    (i) =>
      `must be auto, 1024x1024, 1536x1024, 1024x1536 or WIDTHxHEIGHT with sides ${MIN_SIDE}-${MAX_SIDE}, got ${JSON.stringify(i.input)}`,
  ),
);

const pick = <const T extends readonly [string, ...string[]]>(values: T) =>
  v.picklist(values, (i) => `must be one of ${values.join(", ")}, got ${JSON.stringify(i.input)}`);

const intIn = (min: number, max: number) =>
  v.pipe(
    v.number("must be an integer"),
    v.integer("must be an integer"),
    v.minValue(min, (i) => `must be between ${min} and ${max}, got ${String(i.input)}`),
    v.maxValue(max, (i) => `must be between ${min} and ${max}, got ${String(i.input)}`),
  );

/** Fields shared by generation and edit, after defaults. */
const common = {
  model: v.pipe(
    v.string((i) =>
      i.input === undefined ? "is required: name an image model such as modelx-image-2" : "must be a string",
    ),
    v.minLength(1, "must name an image model such as modelx-image-2"),
  ),
  prompt: Prompt,
  size: v.optional(Size, "auto"),
  quality: v.optional(pick(["auto", "low", "medium", "high"]), "auto"),
  background: v.optional(pick(["auto", "transparent", "opaque"]), "auto"),
  output_format: v.optional(pick(["png", "jpeg", "webp"]), "png"),
  output_compression: v.optional(intIn(0, 100), 100),
  moderation: v.optional(pick(["auto", "low"]), "auto"),
  n: v.optional(intIn(1, 10), 1),
  stream: v.optional(v.boolean("must be true or false"), false),
  partial_images: v.optional(intIn(0, 3), 0),
  user: v.optional(v.string("must be a string")),
  // Ignored whatever its value: image models always answer b64_json (docs/api.md).
  response_format: v.optional(v.unknown()),
};

export const GenerationBodySchema = v.looseObject(common);

export const EditFieldsSchema = v.looseObject({
  ...common,
  input_fidelity: v.optional(pick(["low", "high"]), "low"),
});

export type GenerationBody = v.InferOutput<typeof GenerationBodySchema>;
export type EditFields = v.InferOutput<typeof EditFieldsSchema>;

/** The options an image job carries, whichever endpoint it came from. */
export interface ImageOptions {
  prompt: string;
  size: string;
  quality: "auto" | "low" | "medium" | "high";
  background: "auto" | "transparent" | "opaque";
  outputFormat: "png" | "jpeg" | "webp";
  outputCompression: number;
  moderation: "auto" | "low";
  n: number;
  stream: boolean;
  partialImages: number;
  user: string | undefined;
  inputFidelity: "low" | "high" | undefined;
}

/** The domain options of a parsed body; refuses conflicting fields (transparent with jpeg). */
export function toImageOptions(body: GenerationBody | EditFields): ImageOptions {
  if (body.background === "transparent" && body.output_format === "jpeg") {
    throw new GatewayError(
      "invalid_request",
      "background: transparent needs output_format png or webp (jpeg has no alpha channel); change one of them",
      { param: "background" },
    );
  }
  return {
    prompt: body.prompt,
    size: body.size,
    quality: body.quality,
    background: body.background,
    outputFormat: body.output_format,
    outputCompression: body.output_compression,
    moderation: body.moderation,
    n: body.n,
    stream: body.stream,
    partialImages: body.stream ? body.partial_images : 0,
    user: body.user,
    inputFidelity: "input_fidelity" in body ? (body.input_fidelity as "low" | "high") : undefined,
  };
}

const NUMERIC_FIELDS = new Set(["n", "output_compression", "partial_images"]);

/**
 * Multipart text fields → JSON-like values for the same schema as the JSON body: whole numbers
 * for numeric fields, `true`/`false` for stream. Anything else stays a string (and fails
 * validation with the field's name if the field wants another type).
 */
export function coerceFormFields(fields: Readonly<Record<string, string>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(fields)) {
    if (NUMERIC_FIELDS.has(name) && /^-?\d+$/.test(value.trim())) out[name] = Number(value.trim());
    else if (name === "stream" && (value === "true" || value === "false")) out[name] = value === "true";
    else out[name] = value;
  }
  return out;
}
