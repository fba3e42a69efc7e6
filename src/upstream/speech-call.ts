// What a speech attempt hands a channel's adapter (speech.ts dispatches it).
import type { Secret } from "../base/types.ts";

export interface SpeechCall {
  /** The JSON body for this channel: the reference's fields, its model id. */
  body: Readonly<Record<string, unknown>>;
  /** SSE (`stream_format: "sse"`) or audio bytes. */
  sse: boolean;
  signal: AbortSignal;
  /** Aborts `signal` with a reason (the attempt's guard); lets the connect probe fail the call. */
  abort: (reason: Error) => void;
  credential: Secret | undefined;
  simSeed: number;
}
