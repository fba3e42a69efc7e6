// The benchmark's upstream: a fixed-response server speaking OpenAI Chat Completions, OpenAI
// Responses (`/v1/responses`) and Anthropic Messages (`/v1/messages`), faster than every target it
// stands behind. Non-stream requests get one realistic answer; `"stream": true` gets the protocol's
// 64 SSE events 20 ms apart (answers.ts); a request whose `user` is `bench-hold-MS` gets one event at
// once and the rest after MS milliseconds (for holding many streams open); a non-stream request
// whose `user` is `bench-delay-MS` is answered after MS milliseconds (a model that takes its time,
// for the sustained-throughput figure).
// Run as its own process: `bun bench/upstream.ts PORT`; prints `listening PORT` when ready.
import { ANSWERS, type Protocol, protocolOfPath, STREAM_EVENTS } from "./answers.ts";

export { STREAM_EVENTS };
export const STREAM_INTERVAL_MS = 20;
const HOLD = /"user"\s*:\s*"bench-hold-(\d{1,6})"/;
const STREAMING = /"stream"\s*:\s*true/;
const DELAY = /"user"\s*:\s*"bench-delay-(\d{1,6})"/;

const JSON_HEADERS = { "content-type": "application/json" };
const SSE_HEADERS = { "content-type": "text/event-stream", "cache-control": "no-cache" };
const encoder = new TextEncoder();

/** Each protocol's events, encoded once: the upstream spends no time building them per request. */
const CHUNKS: Readonly<Record<Protocol, Uint8Array[]>> = {
  chat: ANSWERS.chat.events.map((e) => encoder.encode(e)),
  responses: ANSWERS.responses.events.map((e) => encoder.encode(e)),
  messages: ANSWERS.messages.events.map((e) => encoder.encode(e)),
};

/** Streams in flight: GET /stats reports it, so the bench can see whether targets cancel upstream. */
let activeStreams = 0;
/** Answers sent late for `bench-delay-MS`: GET /stats reports it, so the bench sees the marker arrived. */
let delayedAnswers = 0;

/** A stream that sends chunk 0 now and each next one `gapMs(i)` after the previous. */
function sseStream(chunks: Uint8Array[], gapMs: (index: number) => number): ReadableStream<Uint8Array> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let wake: (() => void) | undefined;
  let cancelled = false;
  return new ReadableStream<Uint8Array>({
    type: "direct",
    async pull(controller) {
      activeStreams++;
      try {
        for (let i = 0; i < chunks.length && !cancelled; i++) {
          if (i > 0) {
            await new Promise<void>((resolve) => {
              wake = resolve;
              timer = setTimeout(resolve, gapMs(i));
            });
          }
          const bytes = chunks[i];
          if (bytes === undefined || cancelled) break;
          controller.write(bytes);
          await controller.flush();
        }
        if (!cancelled) controller.close();
      } finally {
        activeStreams--;
      }
    },
    cancel() {
      cancelled = true;
      clearTimeout(timer);
      wake?.();
    },
  });
}

/** The answer to a POST of `body` to `path` (Chat unless the path is Responses' or Messages'). */
export function handle(body: string, path = "/v1/chat/completions"): Response | Promise<Response> {
  const protocol = protocolOfPath(path);
  if (!STREAMING.test(body)) {
    const answer = () => new Response(ANSWERS[protocol].answer, { headers: JSON_HEADERS });
    const delay = DELAY.exec(body)?.[1];
    if (delay === undefined) return answer();
    delayedAnswers++;
    return Bun.sleep(Number(delay)).then(answer);
  }
  const hold = HOLD.exec(body);
  const holdMs = hold?.[1] === undefined ? undefined : Number(hold[1]);
  const gap = holdMs === undefined ? () => STREAM_INTERVAL_MS : (i: number) => (i === 1 ? holdMs : 0);
  return new Response(sseStream(CHUNKS[protocol], gap), { headers: SSE_HEADERS });
}

if (import.meta.main) {
  const port = Number(process.argv[2] ?? "0");
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port,
    idleTimeout: 0,
    async fetch(request) {
      if (request.method !== "POST")
        return Response.json({ active_streams: activeStreams, delayed_answers: delayedAnswers });
      const url = request.url;
      const path = url.slice(url.indexOf("/", url.indexOf("//") + 2));
      return handle(await request.text(), path);
    },
  });
  console.log(`listening ${server.port}`);
}
