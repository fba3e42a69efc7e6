// Reading an image-edit upload: the multipart body is streamed through busboy as it arrives,
// each file capped separately at 20 MB *while* it streams (busboy truncates at the cap and the
// request is abandoned with 413, so no more than the cap of a file is ever held), then each file
// is recognised by its magic bytes and its header dimensions are checked before anything decodes it.
import { Busboy, type BusboyFileStream, type BusboyInstance } from "@fastify/busboy";
import { TimedReader } from "../request/body.ts";
import { CappedBuffer, declaredLength } from "../request/capped.ts";
import { contentCodings } from "../request/encoding.ts";
import type { UploadedImage } from "../upstream/image-job.ts";
import { GatewayError } from "../wire/errors.ts";
import { dimensionProblem, sniffImage } from "../wire/images-sniff.ts";
import { structureProblem } from "../wire/images-structure.ts";

/** Per uploaded file (image and mask counted separately): 20 MB (docs/api.md). */
export const MAX_FILE_BYTES = 20_000_000;
/** At most this many reference images (the Images API takes up to 16). */
export const MAX_IMAGES = 16;
const MAX_FIELD_BYTES = 256 * 1024;
const FILE_FIELDS = new Set(["image", "image[]", "mask"]);

export interface ImageUpload {
  fields: Record<string, string>;
  images: UploadedImage[];
  mask: UploadedImage | undefined;
}

function bad(message: string, param: string | null = null): GatewayError {
  return new GatewayError("invalid_request", message, { param });
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * A text field's value as UTF-8, or a 400 naming it (the same rule as a JSON body: bytes that are
 * not UTF-8 are refused, never replaced). The parser hands a field without a declared charset
 * over as its raw bytes (`defCharset: "latin1"`, one character per byte); a value holding a
 * character above U+00FF was decoded by a charset its part declared, and is taken as decoded.
 */
export function fieldText(name: string, value: string): string {
  for (let i = 0; i < value.length; i++) if (value.charCodeAt(i) > 0xff) return value;
  try {
    return strictUtf8.decode(Buffer.from(value, "latin1"));
  } catch {
    throw bad(
      `${name} is not valid UTF-8 text: send form fields encoded as UTF-8 (a byte sequence that is not UTF-8 is refused, never replaced)`,
      name,
    );
  }
}

/** Checks a complete file: a PNG, JPEG or WebP whose header size is acceptable. */
export function recognise(bytes: Uint8Array, field: string): UploadedImage {
  const info = sniffImage(bytes);
  if (!info) {
    throw bad(
      `${field}: the file is not a PNG, JPEG or WebP image (recognised by its bytes, not its name)`,
      field,
    );
  }
  const problem = dimensionProblem(info);
  if (problem) throw bad(`${field}: ${problem}; upload a smaller image`, field);
  const broken = structureProblem(bytes, info.format);
  if (broken) throw bad(`${field}: ${broken}; upload the complete, unmodified file`, field);
  return { bytes, info };
}

/** A busboy parser for `contentType` (a malformed boundary is a 400, not a throw out of busboy). */
export function multipartParser(
  contentType: string,
  isFile: (name: string | undefined) => boolean,
  limits: { fileSize: number; files: number; fieldSize: number; fields: number },
): BusboyInstance {
  try {
    return Busboy({
      headers: { "content-type": contentType },
      isPartAFile: isFile,
      // Fields arrive as their bytes, so fieldText can refuse what is not UTF-8.
      defCharset: "latin1",
      limits,
    });
  } catch (thrown) {
    throw bad(`malformed multipart/form-data: ${thrown instanceof Error ? thrown.message : String(thrown)}`);
  }
}

/** Streams the request body through the multipart parser; resolves once every part is in. */
export async function readImageUpload(request: Request): Promise<ImageUpload> {
  const contentType = request.headers.get("content-type") ?? "";
  if (!contentType.toLowerCase().startsWith("multipart/form-data") || !request.body) {
    throw bad(
      `images/edits takes multipart/form-data with an image file and a prompt, got content-type "${contentType}"`,
    );
  }
  if (contentCodings(request.headers).length > 0) {
    // busboy reads the multipart stream as it arrives; a compressed one would need a second cap per file.
    throw new GatewayError(
      "unsupported_encoding",
      "images/edits takes its multipart/form-data body uncompressed: send it without Content-Encoding.",
      { param: "Content-Encoding" },
    );
  }
  const upload: ImageUpload = { fields: {}, images: [], mask: undefined };
  // A file is never longer than the body it comes in: its buffer reserves no more (capped.ts).
  const bodyLength = declaredLength(request, MAX_FILE_BYTES);
  let failure: GatewayError | undefined;
  const fail = (error: GatewayError) => {
    failure ??= error;
  };
  const parser = multipartParser(contentType, (name) => FILE_FIELDS.has(name ?? ""), {
    fileSize: MAX_FILE_BYTES,
    files: MAX_IMAGES + 1,
    fieldSize: MAX_FIELD_BYTES,
    fields: 64,
  });
  const finished = new Promise<void>((resolve) => {
    parser.on("finish", resolve);
    parser.on("error", (e) => {
      if (inFile !== undefined) fail(endedInside(inFile));
      fail(bad(`malformed multipart/form-data: ${e instanceof Error ? e.message : String(e)}`));
      resolve();
    });
  });
  parser.on("field", (name, value, _nameCut, valueCut) => {
    if (valueCut) fail(bad(`${name}: value longer than ${MAX_FIELD_BYTES} bytes`, name));
    else {
      try {
        upload.fields[name] = fieldText(name, value);
      } catch (thrown) {
        if (thrown instanceof GatewayError) fail(thrown);
        else throw thrown;
      }
    }
  });
  parser.on("filesLimit", () => fail(bad(`at most ${MAX_IMAGES} images and one mask are accepted`, "image")));
  // The file part being read: a body that ends inside it is refused naming it.
  let inFile: string | undefined;
  parser.on("file", (name, stream) => {
    inFile = name === "image[]" ? "image" : name;
    stream.on("end", () => {
      inFile = undefined;
    });
    collectFile(name, stream, upload, fail, bodyLength);
  });
  await pump(request, request.body, parser, () => failure !== undefined);
  if (failure === undefined) await finished;
  if (failure !== undefined) throw failure;
  return upload;
}

function endedInside(field: string): GatewayError {
  return bad(`${field}: the upload ended inside this file; send the complete multipart body`, field);
}

function collectFile(
  name: string,
  stream: BusboyFileStream,
  upload: ImageUpload,
  fail: (error: GatewayError) => void,
  bodyLength: number,
): void {
  // busboy stops a file at the cap (`limit` below), so every append fits.
  const file = new CappedBuffer(MAX_FILE_BYTES, 0, bodyLength);
  const field = name === "image[]" ? "image" : name;
  stream.on("data", (chunk: Buffer) => {
    if (!stream.truncated) file.append(chunk);
  });
  // A body that ends inside this file: busboy reports it on the file's stream (an 'error' event
  // with no listener would throw out of the parser).
  stream.on("error", () => fail(endedInside(field)));
  stream.on("limit", () =>
    fail(
      new GatewayError(
        "too_large",
        `${field}: the file is larger than ${MAX_FILE_BYTES} bytes (20 MB); upload a smaller file`,
        { param: field },
      ),
    ),
  );
  stream.on("end", () => {
    if (stream.truncated) return;
    try {
      const image = recognise(file.bytes(), field);
      if (field === "mask") {
        if (upload.mask) throw bad("mask: send at most one mask", "mask");
        upload.mask = image;
      } else upload.images.push(image);
    } catch (thrown) {
      if (thrown instanceof GatewayError) fail(thrown);
      else throw thrown;
    }
  });
}

/** Feeds the body to the parser chunk by chunk within the body timeouts, honouring back-pressure; stops early on failure. */
export async function pump(
  request: Request,
  body: ReadableStream<Uint8Array>,
  parser: BusboyInstance,
  failed: () => boolean,
): Promise<void> {
  const reader = new TimedReader(request, body);
  for (let chunk = await reader.next(); chunk !== undefined; chunk = await reader.next()) {
    const accepted = parser.write(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    if (failed()) {
      reader.cancel();
      return;
    }
    if (!accepted) await new Promise((resolve) => parser.once("drain", resolve));
  }
  parser.end();
}
