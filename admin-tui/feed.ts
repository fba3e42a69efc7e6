// Tails GET /admin/v1/events: parses server-sent events, reconnects with backoff when the
// gateway goes away (or drops this reader), and reports its connection state for the status line.
import { createParser } from "eventsource-parser";
import * as v from "valibot";
import { type RequestEvent, RequestEvent as RequestEventSchema } from "./types.ts";

export type FeedState =
  | { kind: "connecting" }
  | { kind: "live" }
  | { kind: "down"; reason: string; retryInMs: number };

export interface FeedSource {
  /** Starts tailing; returns the function that stops. */
  subscribe(onEvent: (e: RequestEvent) => void, onState: (s: FeedState) => void): () => void;
}

/**
 * The `{event, data}` messages of an SSE byte stream, read by eventsource-parser as the gateway's
 * own SSE is: LF or CRLF line endings, events and characters split anywhere across chunks,
 * comments (the keep-alive) skipped. An event without a name is a `message`.
 */
export async function* sseFrames(
  body: ReadableStream<Uint8Array>,
): AsyncGenerator<{ event: string; data: string }> {
  const frames: { event: string; data: string }[] = [];
  const parser = createParser({ onEvent: (m) => frames.push({ event: m.event ?? "message", data: m.data }) });
  const decoder = new TextDecoder();
  for await (const chunk of body) {
    parser.feed(decoder.decode(chunk, { stream: true }));
    yield* frames.splice(0);
  }
}

export class HttpFeed implements FeedSource {
  constructor(
    private readonly url: string,
    private readonly token: string,
  ) {}

  subscribe(onEvent: (e: RequestEvent) => void, onState: (s: FeedState) => void): () => void {
    let stopped = false;
    let controller = new AbortController();
    const run = async () => {
      let delay = 500;
      while (!stopped) {
        onState({ kind: "connecting" });
        let reason = "connection closed";
        try {
          const response = await fetch(`${this.url}/admin/v1/events`, {
            headers: { authorization: `Bearer ${this.token}` },
            signal: controller.signal,
          });
          if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
          for await (const frame of sseFrames(response.body)) {
            if (frame.event === "ready") {
              onState({ kind: "live" });
              delay = 500;
            } else if (frame.event === "request") {
              const parsed = v.safeParse(RequestEventSchema, JSON.parse(frame.data));
              if (parsed.success) onEvent(parsed.output);
            } else if (frame.event === "dropped") reason = "dropped by the gateway (reader too slow)";
            else if (frame.event === "closing") reason = "the gateway is shutting down";
          }
        } catch (error) {
          reason = error instanceof Error ? error.message : String(error);
        }
        if (stopped) return;
        onState({ kind: "down", reason, retryInMs: delay });
        await Bun.sleep(delay);
        delay = Math.min(delay * 2, 5000);
        controller = new AbortController();
      }
    };
    void run();
    return () => {
      stopped = true;
      controller.abort();
    };
  }
}
