// Reading a speech-to-text upload: the multipart body streamed through busboy as it arrives (the
// reader of image edits, images-upload.ts), the one `file` part capped at 25 MB *while* it streams
// (413 by a declared length that cannot fit, or at the cap while reading, the rest never read),
// text fields kept with every value of a repeated field (`timestamp_granularities[]`, `include[]`), then the file recognised by music-metadata
// (src/wire/audio.ts).

import { CappedBuffer, declaredLength } from "../request/capped.ts";
import { contentCodings } from "../request/encoding.ts";
import { type AudioFile, readAudio } from "../wire/audio.ts";
import { GatewayError } from "../wire/errors.ts";
import { fieldText, multipartParser, pump } from "./images-upload.ts";

/** The reference's upload limit: 25 MB. */
export const MAX_AUDIO_BYTES = 25 * 1024 * 1024;
const MAX_FIELD_BYTES = 64 * 1024;

export interface AudioUpload {
  /** Each text field's values in order (a repeated field has several). */
  fields: Record<string, string[]>;
  file: AudioFile | undefined;
}

function bad(message: string, param: string | null = null): GatewayError {
  return new GatewayError("invalid_request", message, { param });
}

/** Most fields a form may carry beside its file (each at most MAX_FIELD_BYTES). */
const MAX_FIELDS = 64;

/**
 * The longest body that can hold a file within the cap: the file, every field at its cap, and
 * room for the parts' headers. A body declared longer is refused before any of it is read.
 */
const MAX_BODY_BYTES = MAX_AUDIO_BYTES + MAX_FIELDS * (MAX_FIELD_BYTES + 1024) + 64 * 1024;

function fileTooLarge(): GatewayError {
  return new GatewayError(
    "too_large",
    `file is larger than ${MAX_AUDIO_BYTES} bytes (25 MB); split the audio or compress it (mp3, ogg)`,
    // The rest of the body is never read: the connection cannot carry another request.
    { param: "file", headers: { connection: "close" } },
  );
}

/** Streams the request body through the multipart parser; resolves once every part is in. */
export async function readAudioUpload(request: Request, path: string): Promise<AudioUpload> {
  const contentType = request.headers.get("content-type") ?? "";
  if (!contentType.toLowerCase().startsWith("multipart/form-data") || !request.body) {
    throw bad(`${path} takes multipart/form-data with a file and a model, got content-type "${contentType}"`);
  }
  if (contentCodings(request.headers).length > 0) {
    // busboy reads the multipart stream as it arrives; a compressed one would need a second cap per file.
    throw new GatewayError(
      "unsupported_encoding",
      `${path} takes its multipart/form-data body uncompressed: send it without Content-Encoding.`,
      { param: "Content-Encoding" },
    );
  }
  if (Number(request.headers.get("content-length")) > MAX_BODY_BYTES) throw fileTooLarge();
  const fields: Record<string, string[]> = {};
  let bytes: Uint8Array | undefined;
  let failure: GatewayError | undefined;
  const fail = (error: GatewayError) => {
    failure ??= error;
  };
  const parser = multipartParser(contentType, (name) => name === "file", {
    fileSize: MAX_AUDIO_BYTES,
    files: 1,
    fieldSize: MAX_FIELD_BYTES,
    fields: MAX_FIELDS,
  });
  let inFile = false;
  const finished = new Promise<void>((resolve) => {
    parser.on("finish", resolve);
    parser.on("error", (e) => {
      if (inFile)
        fail(bad("file: the upload ended inside the file; send the complete multipart body", "file"));
      fail(bad(`malformed multipart/form-data: ${e instanceof Error ? e.message : String(e)}`));
      resolve();
    });
  });
  parser.on("field", (name, value, _nameCut, valueCut) => {
    if (valueCut) fail(bad(`${name}: value longer than ${MAX_FIELD_BYTES} bytes`, name));
    else {
      try {
        fields[name] = [...(fields[name] ?? []), fieldText(name, value)];
      } catch (error) {
        if (error instanceof GatewayError) fail(error);
        else throw error;
      }
    }
  });
  parser.on("filesLimit", () => fail(bad("send one file", "file")));
  parser.on("file", (_name, stream) => {
    inFile = true;
    const buffer = new CappedBuffer(MAX_AUDIO_BYTES, 0, declaredLength(request, MAX_AUDIO_BYTES));
    stream.on("data", (chunk: Buffer) => {
      if (!stream.truncated) buffer.append(chunk);
    });
    stream.on("error", () =>
      fail(bad("file: the upload ended inside the file; send the complete multipart body", "file")),
    );
    stream.on("limit", () => fail(fileTooLarge()));
    stream.on("end", () => {
      inFile = false;
      if (!stream.truncated) bytes = buffer.bytes();
    });
  });
  await pump(request, request.body, parser, () => failure !== undefined);
  if (failure === undefined) await finished;
  if (failure !== undefined) throw failure;
  return { fields, file: bytes === undefined ? undefined : await readAudio(bytes) };
}
