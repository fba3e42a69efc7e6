// Strict schemas of what the gateway sends to an OpenAI images upstream, written from the official
// API reference (openai-openapi `CreateImageRequest` and the multipart `CreateImageEditRequest`, as
// typed by the openai SDK's ImageGenerateParams / ImageEditParams): unknown or misplaced fields
// fail, values outside the documented enums and ranges fail, and fields that only apply together
// (partial_images with stream, output_compression with jpeg/webp, transparency without jpeg) are
// checked together. A multipart form is first flattened to text fields and file parts.
import * as v from "valibot";
import type { MultipartForm } from "../helpers/recording-upstream.ts";

const QUALITY = ["auto", "low", "medium", "high"] as const;
const BACKGROUND = ["auto", "transparent", "opaque"] as const;
const FORMAT = ["png", "jpeg", "webp"] as const;
/** Standard sizes, `auto`, or WIDTHxHEIGHT (gpt-image-2 takes any size with sides divisible by 16). */
const Size = v.pipe(v.string(), v.regex(/^(auto|\d{2,4}x\d{2,4})$/, "size must be auto or WIDTHxHEIGHT"));
const intRange = (min: number, max: number) =>
  v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(max));

interface Combined {
  stream?: boolean | undefined;
  partial_images?: number | undefined;
  output_format?: string | undefined;
  output_compression?: number | undefined;
  background?: string | undefined;
}

/** The rules that tie fields together, shared by both endpoints. */
function combinationProblem(body: Combined): string | undefined {
  if (body.partial_images !== undefined && body.stream !== true)
    return "partial_images is only accepted with stream: true";
  if (body.output_compression !== undefined && !["jpeg", "webp"].includes(body.output_format ?? "png"))
    return "output_compression only applies to jpeg and webp";
  if (body.background === "transparent" && body.output_format === "jpeg")
    return "a transparent background needs png or webp";
  return undefined;
}

/** `POST /images/generations` JSON body. */
export const GenerationRequestSchema = v.pipe(
  v.strictObject({
    prompt: v.pipe(v.string(), v.minLength(1), v.maxLength(32_000)),
    model: v.optional(v.pipe(v.string(), v.minLength(1))),
    n: v.optional(intRange(1, 10)),
    size: v.optional(Size),
    quality: v.optional(v.picklist(QUALITY)),
    background: v.optional(v.picklist(BACKGROUND)),
    output_format: v.optional(v.picklist(FORMAT)),
    output_compression: v.optional(intRange(0, 100)),
    moderation: v.optional(v.picklist(["auto", "low"])),
    stream: v.optional(v.boolean()),
    partial_images: v.optional(intRange(0, 3)),
    user: v.optional(v.string()),
  }),
  v.check((body) => combinationProblem(body) === undefined, "fields that only apply together"),
);

const IntText = v.pipe(v.string(), v.regex(/^\d+$/), v.transform(Number));
const BoolText = v.pipe(
  v.picklist(["true", "false"]),
  v.transform((s) => s === "true"),
);

/** The text fields of `POST /images/edits` (every multipart value is text on the wire). */
export const EditFieldsSchema = v.pipe(
  v.strictObject({
    prompt: v.pipe(v.string(), v.minLength(1), v.maxLength(32_000)),
    model: v.optional(v.pipe(v.string(), v.minLength(1))),
    n: v.optional(v.pipe(IntText, intRange(1, 10))),
    size: v.optional(Size),
    quality: v.optional(v.picklist(QUALITY)),
    background: v.optional(v.picklist(BACKGROUND)),
    output_format: v.optional(v.picklist(FORMAT)),
    output_compression: v.optional(v.pipe(IntText, intRange(0, 100))),
    input_fidelity: v.optional(v.picklist(["low", "high"])),
    stream: v.optional(BoolText),
    partial_images: v.optional(v.pipe(IntText, intRange(0, 3))),
    user: v.optional(v.string()),
  }),
  v.check((body) => combinationProblem(body) === undefined, "fields that only apply together"),
);

const EXTENSIONS: Record<string, readonly string[]> = {
  "image/png": ["png"],
  "image/jpeg": ["jpg", "jpeg"],
  "image/webp": ["webp"],
};

const FilePartSchema = v.pipe(
  v.strictObject({
    field: v.picklist(["image", "image[]", "mask"]),
    type: v.picklist(["image/png", "image/jpeg", "image/webp"], "file parts must be png, jpeg or webp"),
    filename: v.pipe(v.string(), v.minLength(1)),
    size: v.pipe(v.number(), v.minValue(1), v.maxValue(50_000_000)),
  }),
  v.check(
    (part) => (EXTENSIONS[part.type] ?? []).includes(part.filename.split(".").at(-1)?.toLowerCase() ?? ""),
    "the file name's extension must match its content type",
  ),
  v.check((part) => part.field !== "mask" || part.type === "image/png", "mask must be image/png"),
);
/** A file part as it arrived, before the schema judges it. */
export interface FilePart {
  field: string;
  type: string;
  filename: string;
  size: number;
}

/** The file parts of an edit: 1-16 images under one name (`image` alone, or `image[]`), at most one mask. */
export const EditFilesSchema = v.pipe(
  v.array(FilePartSchema),
  v.check((parts) => {
    const images = parts.filter((p) => p.field !== "mask");
    const names = new Set(images.map((p) => p.field));
    return images.length >= 1 && images.length <= 16 && names.size === 1;
  }, "1 to 16 images, all sent as image or all as image[]"),
  v.check((parts) => {
    const images = parts.filter((p) => p.field !== "mask");
    return images.length === 1 || images.every((p) => p.field === "image[]");
  }, "several images go as image[]"),
  v.check((parts) => parts.filter((p) => p.field === "mask").length <= 1, "at most one mask"),
);

/** A multipart form split into its text fields and its file parts (with the bytes for sniffing). */
export function splitForm(form: MultipartForm): {
  fields: Record<string, string>;
  files: FilePart[];
  bytes: Promise<Uint8Array>[];
  repeated: string[];
} {
  const fields: Record<string, string> = {};
  const files: FilePart[] = [];
  const bytes: Promise<Uint8Array>[] = [];
  const repeated: string[] = [];
  for (const [name, value] of form.entries()) {
    const entry: unknown = value;
    if (entry instanceof Blob) {
      const filename = entry instanceof File ? entry.name : "";
      files.push({ field: name, type: entry.type, filename, size: entry.size });
      bytes.push(entry.arrayBuffer().then((buffer) => new Uint8Array(buffer)));
      continue;
    }
    if (name in fields) repeated.push(name);
    fields[name] = String(entry);
  }
  return { fields, files, bytes, repeated };
}

// ---- What the gateway emits to clients on an image stream ----

const UsageSchema = v.looseObject({
  input_tokens: v.number(),
  output_tokens: v.number(),
  total_tokens: v.number(),
  input_tokens_details: v.looseObject({ text_tokens: v.number(), image_tokens: v.number() }),
});

/** Every field the official events require (ImageGen/ImageEdit PartialImage and Completed events). */
const officialFields = {
  b64_json: v.pipe(v.string(), v.minLength(1)),
  created_at: v.pipe(v.number(), v.integer()),
  // The reference lists the standard sizes and auto; lenient WxH sizes are reported as they are.
  size: v.pipe(v.string(), v.regex(/^(auto|\d+x\d+)$/)),
  quality: v.picklist(QUALITY),
  background: v.picklist(BACKGROUND),
  output_format: v.picklist(FORMAT),
};

/** A progress event: the official partial event plus the gateway's `index`. */
export const PartialEventSchema = v.looseObject({
  type: v.picklist(["image_generation.partial_image", "image_edit.partial_image"]),
  ...officialFields,
  partial_image_index: v.pipe(v.number(), v.integer(), v.minValue(0)),
  index: v.pipe(v.number(), v.integer(), v.minValue(0)),
});

/** The final event: the official completed event plus the gateway's `data` and `usage`. */
export const CompletedEventSchema = v.pipe(
  v.looseObject({
    type: v.picklist(["image_generation.completed", "image_edit.completed"]),
    ...officialFields,
    usage: UsageSchema,
    data: v.pipe(v.array(v.strictObject({ b64_json: v.pipe(v.string(), v.minLength(1)) })), v.minLength(1)),
  }),
  v.check((event) => event.data[0]?.b64_json === event.b64_json, "the top-level image is the first of data"),
);
