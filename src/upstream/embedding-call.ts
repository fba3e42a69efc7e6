// What an embeddings attempt hands a channel's adapter (embeddings.ts dispatches it).
import type { Secret } from "../base/types.ts";

export interface EmbeddingCall {
  /** The body for this channel: its model id, the encoding it takes. */
  body: Readonly<Record<string, unknown>>;
  signal: AbortSignal;
  /** Aborts `signal` with a reason (the attempt's guard); lets the connect probe fail the call. */
  abort: (reason: Error) => void;
  credential: Secret | undefined;
  simSeed: number;
}
