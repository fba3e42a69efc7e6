// Plays a simulated answer's SSE events with the configured timing: a wait before the first
// content event (time to first token), then one token every 1/tps seconds; and cuts the
// connection after N content events when a test asked for a drop.
import { sseEvent } from "../../wire/sse.ts";

export interface SimEvent {
  /** The SSE `event:` name; undefined for data-only streams (Chat). */
  name: string | undefined;
  /** The `data:` payload: an object (sent as JSON) or a literal string such as `[DONE]`. */
  data: unknown;
  /** Output tokens this event carries (paces the stream; 0 for framing events). */
  tokens: number;
}

export interface Timing {
  ttftMs: number;
  /** 0 means no pacing: as fast as possible. */
  tokensPerSecond: number;
}

/** A byte stream of the events, paced by `timing`, erroring after `dropAfter` content events. */
export function pacedStream(
  events: readonly SimEvent[],
  timing: Timing,
  dropAfter?: number,
): ReadableStream<Uint8Array> {
  let index = 0;
  let contentSent = 0;
  let started = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const event = events[index++];
      if (event === undefined) {
        controller.close();
        return;
      }
      if (event.tokens > 0) {
        if (dropAfter !== undefined && contentSent >= dropAfter) {
          // Let the events already sent reach the socket before it is cut.
          await Bun.sleep(50);
          controller.error(new Error("simulated upstream disconnect (sim:drop)"));
          return;
        }
        await Bun.sleep(delayFor(event.tokens, timing, started));
        started = true;
        contentSent++;
      }
      const data = typeof event.data === "string" ? event.data : JSON.stringify(event.data);
      controller.enqueue(sseEvent(event.name, data));
    },
  });
}

function delayFor(tokens: number, timing: Timing, started: boolean): number {
  const perToken = timing.tokensPerSecond > 0 ? 1000 / timing.tokensPerSecond : 0;
  return (started ? 0 : timing.ttftMs) + perToken * tokens;
}

/** A JSON body that breaks off half-way (non-stream `sim:drop`). */
export function brokenBody(json: string): ReadableStream<Uint8Array> {
  const half = new TextEncoder().encode(json.slice(0, Math.floor(json.length / 2)));
  let sent = false;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent) {
        controller.error(new Error("simulated upstream disconnect (sim:drop)"));
        return;
      }
      sent = true;
      controller.enqueue(half);
    },
  });
}
