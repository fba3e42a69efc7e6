// The relay of a streamed media answer (speech audio, speech and transcription SSE): the
// upstream's chunks passed on one pull at a time as they arrive (nothing is held), each shown to
// the caller's reader on the side (events parsed for usage, bytes counted), and the settlement
// sent once whichever way the stream ends — its end, a failure, the client leaving — before the
// stream closes, so its end waits for the record to be durable. An SSE stream then ends with its
// settled cost as a comment line (src/wire/cost.ts); raw audio bytes carry none.
import { createParser } from "eventsource-parser";
import { log } from "../base/log.ts";
import type { Nanos } from "../base/types.ts";
import type { GuardedBody } from "../upstream/guard.ts";
import { costComment } from "../wire/cost.ts";
import { asGatewayError } from "../wire/errors.ts";

export interface RelayHooks {
  /** Sees each chunk before it is passed on. */
  chunk(bytes: Uint8Array): void;
  /** Settles the request (called once, awaited before the stream ends); resolves to its cost. */
  settle(): Promise<Nanos>;
  /** The stream is SSE: it ends with its settled cost as a comment line. */
  sse: boolean;
  /** Stops the upstream call when the client left. */
  stop(): void;
  /** Names the stream in the log line of an unexpected failure. */
  what: string;
}

export function relayBody(body: GuardedBody | undefined, hooks: RelayHooks): ReadableStream<Uint8Array> {
  let settled: Promise<Nanos> | undefined;
  const settle = () => {
    settled ??= hooks.settle();
    return settled;
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const step = body === undefined ? { done: true as const } : await body.read();
        if (step.done) {
          const cost = await settle();
          if (hooks.sse) controller.enqueue(costComment(cost));
          controller.close();
          return;
        }
        hooks.chunk(step.value);
        controller.enqueue(step.value);
      } catch (thrown) {
        const error = asGatewayError(thrown);
        if (error.kind === "internal") log("error", `${hooks.what} stream failed`, { error: String(thrown) });
        await settle();
        controller.error(thrown);
      }
    },
    async cancel() {
      hooks.stop();
      await body?.cancel().catch(() => undefined);
      await settle();
    },
  });
}

/** Reads the SSE events of relayed chunks on the side: `onEvent` gets each `data:` parsed as JSON. */
export function sideEvents(onEvent: (json: unknown) => void): (bytes: Uint8Array) => void {
  const decoder = new TextDecoder();
  const parser = createParser({
    onEvent: (message) => {
      let json: unknown;
      try {
        json = JSON.parse(message.data);
      } catch {
        return; // not JSON: relayed, not read
      }
      onEvent(json);
    },
  });
  return (bytes) => parser.feed(decoder.decode(bytes, { stream: true }));
}
