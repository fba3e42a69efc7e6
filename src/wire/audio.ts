// An uploaded audio file recognised by music-metadata (its container read from the bytes, not the
// name): one of the types OpenAI's speech-to-text reference lists (flac, mp3, mp4, mpeg, mpga,
// m4a, ogg, wav, webm), its duration read from the container, and a file cut short refused. Each
// problem is a 400 naming `file` and the fix.
import { GatewayError } from "./errors.ts";

/** The audio types the reference accepts, as a refusal lists them. */
export const AUDIO_TYPES = "flac, mp3, mp4, mpeg, mpga, m4a, ogg, wav or webm";

/** A recognised audio file: its bytes, its type as sent upstream, its duration. */
export interface AudioFile {
  bytes: Uint8Array;
  /** The media type the upstream gets (`audio/wav`, …) and the file name's extension. */
  mime: string;
  extension: string;
  /** The container music-metadata read (`WAVE`, `MPEG`, `M4A/isom/iso2`, …). */
  container: string;
  durationMs: number;
}

/** A container music-metadata reports → the type it is sent as; undefined for a type not accepted. */
function typeOf(container: string): { mime: string; extension: string } | undefined {
  const c = container.toLowerCase();
  if (c.startsWith("wave")) return { mime: "audio/wav", extension: "wav" };
  if (c === "mpeg") return { mime: "audio/mpeg", extension: "mp3" };
  if (c === "flac") return { mime: "audio/flac", extension: "flac" };
  if (c === "ogg") return { mime: "audio/ogg", extension: "ogg" };
  if (c.includes("webm")) return { mime: "audio/webm", extension: "webm" };
  // MP4 containers are named by their brands (`M4A/isom/iso2`, `isom/iso2/mp41`, …).
  if (/(^|\/)(m4a|m4b|isom|iso\d|mp4\d|mp41|mp42|dash)(\/|$)/.test(c))
    return { mime: "audio/mp4", extension: "m4a" };
  return undefined;
}

function bad(message: string): GatewayError {
  return new GatewayError("invalid_request", message, { param: "file" });
}

/** Recognises `bytes` as an accepted audio file with a duration; a 400 naming `file` otherwise. */
export async function readAudio(bytes: Uint8Array): Promise<AudioFile> {
  if (bytes.byteLength === 0) throw bad(`file is empty; upload a ${AUDIO_TYPES} file`);
  // music-metadata and its parsers (~200 KB of JavaScript) are loaded by the first upload, outside
  // the try below: a chunk that failed to load is not a client's bad file.
  const { parseBuffer } = await import("music-metadata");
  let container: string | undefined;
  let duration: number | undefined;
  let warnings: string[];
  try {
    const metadata = await parseBuffer(
      bytes,
      { size: bytes.byteLength },
      { duration: true, skipCovers: true },
    );
    container = metadata.format.container;
    duration = metadata.format.duration;
    warnings = metadata.quality.warnings.map((w) => w.message);
  } catch {
    throw bad(
      `file is not audio the gateway can read (recognised by its bytes, not its name); upload a ${AUDIO_TYPES} file`,
    );
  }
  const type = container === undefined ? undefined : typeOf(container);
  if (container === undefined || type === undefined) {
    throw bad(
      `file is ${container ?? "of an unknown type"} audio, which is not accepted; upload a ${AUDIO_TYPES} file`,
    );
  }
  // A data chunk longer than what arrived: the upload was cut short.
  if (warnings.some((w) => /exceeding file length|truncat/i.test(w))) {
    throw bad(
      "file is truncated: its container announces more audio than the upload holds; send the complete file",
    );
  }
  if (duration === undefined || !Number.isFinite(duration) || duration <= 0) {
    throw bad("file holds no audio the gateway can measure (empty or cut short); send the complete file");
  }
  return { bytes, ...type, container, durationMs: Math.ceil(duration * 1000) };
}
