// POST /v1/audio/speech on the wire (OpenAI's CreateSpeechRequest): the JSON body checked field by
// field (400 naming the field; 422 for a speed outside 0.25–4), the input's characters as the
// reference counts them, the media type of each audio format, and the SSE events
// (`speech.audio.delta` / `speech.audio.done`). No I/O.
import * as v from "valibot";
import { SPEECH_FORMATS, type SpeechFormat } from "../catalog/models.ts";
import { parseOrThrow } from "./decode.ts";
import { GatewayError } from "./errors.ts";

/** The reference's input limit, in characters. */
export const MAX_SPEECH_CHARACTERS = 4096;

/** A built-in voice by name, or a custom voice by id. */
const Voice = v.union(
  [v.pipe(v.string(), v.minLength(1)), v.strictObject({ id: v.pipe(v.string(), v.minLength(1)) })],
  "voice must be a voice name such as alloy, or an object {id} of a custom voice",
);

export const SpeechBodySchema = v.strictObject({
  model: v.pipe(v.string("model must be a string"), v.minLength(1, "model must not be empty")),
  input: v.string("input must be a string: the text to speak"),
  voice: Voice,
  instructions: v.optional(
    v.pipe(v.string(), v.maxLength(4096, "instructions may hold at most 4096 characters")),
  ),
  response_format: v.optional(
    v.picklist(SPEECH_FORMATS, `response_format must be one of ${SPEECH_FORMATS.join(", ")}`),
    "mp3",
  ),
  speed: v.optional(v.pipe(v.number("speed must be a number"), v.minValue(0.25), v.maxValue(4)), 1),
  stream_format: v.optional(v.picklist(["audio", "sse"], "stream_format must be audio or sse"), "audio"),
});

export type SpeechBody = v.InferOutput<typeof SpeechBodySchema>;

/** The input's characters as the reference counts them (code points, not UTF-16 units). */
export function characterCount(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/** The body checked: every field of the reference, the input 1 … 4,096 characters. */
export function decodeSpeechBody(raw: unknown): SpeechBody {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new GatewayError(
      "invalid_request",
      "request body must be a JSON object with model, input and voice",
    );
  }
  const body = parseOrThrow(SpeechBodySchema, raw);
  const characters = characterCount(body.input);
  if (characters === 0) {
    throw new GatewayError("invalid_request", "input is empty; give the text to speak", { param: "input" });
  }
  if (characters > MAX_SPEECH_CHARACTERS) {
    throw new GatewayError(
      "invalid_request",
      `input is ${characters} characters, more than the ${MAX_SPEECH_CHARACTERS} one request may speak; split the text`,
      { param: "input" },
    );
  }
  return body;
}

/** The media type of each format, as OpenAI answers it. */
export const SPEECH_CONTENT_TYPES: Readonly<Record<SpeechFormat, string>> = {
  mp3: "audio/mpeg",
  opus: "audio/opus",
  aac: "audio/aac",
  flac: "audio/flac",
  wav: "audio/wav",
  pcm: "audio/pcm",
};

/** The events of `stream_format: "sse"`. */
export const SpeechEventSchema = v.variant("type", [
  v.object({ type: v.literal("speech.audio.delta"), audio: v.string() }),
  v.object({
    type: v.literal("speech.audio.done"),
    usage: v.optional(
      v.object({ input_tokens: v.number(), output_tokens: v.number(), total_tokens: v.optional(v.number()) }),
    ),
  }),
]);
