// Reading a gateway's SSE answer as a client does: through eventsource-parser (the parser the
// gateway itself depends on), never by splitting text, so comments (the settled cost) and
// framing are read the way SDKs read them. The suite's one SSE reader.
import { createParser } from "eventsource-parser";

export interface SseEvent {
  event: string | undefined;
  data: string;
  /** Milliseconds since the request was sent. */
  at: number;
}

/** Reads a whole SSE response into events with their arrival times; comments are counted. */
export async function readSse(
  response: Response,
  sentAt = performance.now(),
): Promise<{ events: SseEvent[]; comments: number }> {
  const events: SseEvent[] = [];
  let comments = 0;
  const parser = createParser({
    onEvent: (e) => events.push({ event: e.event, data: e.data, at: performance.now() - sentAt }),
    onComment: () => {
      comments++;
    },
  });
  const body = response.body;
  if (body === null) throw new Error("no body");
  const decoder = new TextDecoder();
  for await (const chunk of body) parser.feed(decoder.decode(chunk, { stream: true }));
  return { events, comments };
}

/** The JSON payloads of the events (skipping `[DONE]`). */
export function payloads(events: SseEvent[]): Record<string, unknown>[] {
  return events.filter((e) => e.data !== "[DONE]").map((e) => JSON.parse(e.data) as Record<string, unknown>);
}

/** The JSON payload of every event of a whole SSE answer, in order (skipping `[DONE]`). */
export async function sseJson(response: Response): Promise<Record<string, unknown>[]> {
  return payloads((await readSse(response)).events);
}
