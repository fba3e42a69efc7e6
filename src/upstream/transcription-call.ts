// What a speech-to-text attempt hands a channel's adapter (transcriptions.ts dispatches it).
import type { Secret } from "../base/types.ts";
import type { AudioFile } from "../wire/audio.ts";
import type { AudioTask } from "../wire/transcriptions.ts";

export interface TranscriptionCall {
  task: AudioTask;
  /** The text fields in the reference's names, the model mapped; a list is sent as `name[]`. */
  fields: Readonly<Record<string, string | readonly string[]>>;
  file: AudioFile;
  /** Whether the answer is an SSE stream (asked with `stream=true`). */
  stream: boolean;
  signal: AbortSignal;
  /** Aborts `signal` with a reason (the attempt's guard); lets the connect probe fail the call. */
  abort: (reason: Error) => void;
  credential: Secret | undefined;
  simSeed: number;
}

/** The multipart form of a call: its fields, then the file with its real type and a matching name. */
export function transcriptionForm(call: TranscriptionCall): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(call.fields)) {
    if (typeof value === "string") form.append(name, value);
    else for (const item of value) form.append(`${name}[]`, item);
  }
  const { file } = call;
  form.append("file", new Blob([file.bytes], { type: file.mime }), `audio.${file.extension}`);
  return form;
}

/** The path under a channel's base URL. */
export function transcriptionPath(task: AudioTask): string {
  return task === "translation" ? "/audio/translations" : "/audio/transcriptions";
}
