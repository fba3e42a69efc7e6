// The benchmark's upstream: a fixed-response OpenAI Chat Completions server, faster than every
// target it stands behind. Non-stream requests get one realistic JSON body; `"stream": true` gets
// 64 SSE chunks 20 ms apart ending with `data: [DONE]`; a request whose `user` is `bench-hold-MS`
// gets one chunk at once and the rest after MS milliseconds (for holding many streams open).
// Run as its own process: `bun bench/upstream.ts PORT`; prints `listening PORT` when ready.

export const STREAM_EVENTS = 64;
export const STREAM_INTERVAL_MS = 20;
const HOLD = /"user"\s*:\s*"bench-hold-(\d{1,6})"/;
const STREAMING = /"stream"\s*:\s*true/;

const created = 1_767_225_600;

const completion = JSON.stringify({
  id: "chatcmpl-bench0000000000000000000000",
  object: "chat.completion",
  created,
  model: "modelx-5.5",
  choices: [
    {
      index: 0,
      message: {
        role: "assistant",
        content:
          "The gateway relays this fixed answer so that every target is measured against the same upstream.",
        refusal: null,
        annotations: [],
      },
      logprobs: null,
      finish_reason: "stop",
    },
  ],
  usage: {
    prompt_tokens: 19,
    completion_tokens: 18,
    total_tokens: 37,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0 },
  },
  service_tier: "default",
  system_fingerprint: "fp_bench",
});

const JSON_HEADERS = { "content-type": "application/json" };
const SSE_HEADERS = { "content-type": "text/event-stream", "cache-control": "no-cache" };
const encoder = new TextEncoder();

function chunk(index: number, last: boolean): Uint8Array {
  const delta = index === 0 ? { role: "assistant", content: "" } : last ? {} : { content: ` w${index}` };
  const body: Record<string, unknown> = {
    id: "chatcmpl-bench0000000000000000000000",
    object: "chat.completion.chunk",
    created,
    model: "modelx-5.5",
    system_fingerprint: "fp_bench",
    choices: [{ index: 0, delta, logprobs: null, finish_reason: last ? "stop" : null }],
  };
  if (last) body.usage = { prompt_tokens: 19, completion_tokens: STREAM_EVENTS - 2, total_tokens: 81 };
  const text = `data: ${JSON.stringify(body)}\n\n${last ? "data: [DONE]\n\n" : ""}`;
  return encoder.encode(text);
}

/** The 64 chunks, encoded once: the upstream spends no time building them per request. */
const CHUNKS: Uint8Array[] = Array.from({ length: STREAM_EVENTS }, (_, i) =>
  chunk(i, i === STREAM_EVENTS - 1),
);

/** Streams in flight: GET /stats reports it, so the bench can see whether targets cancel upstream. */
let activeStreams = 0;

/** A stream that sends chunk 0 now and each next one `gapMs(i)` after the previous. */
function sseStream(gapMs: (index: number) => number): ReadableStream<Uint8Array> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let wake: (() => void) | undefined;
  let cancelled = false;
  return new ReadableStream<Uint8Array>({
    type: "direct",
    async pull(controller) {
      activeStreams++;
      try {
        for (let i = 0; i < CHUNKS.length && !cancelled; i++) {
          if (i > 0) {
            await new Promise<void>((resolve) => {
              wake = resolve;
              timer = setTimeout(resolve, gapMs(i));
            });
          }
          const bytes = CHUNKS[i];
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

/** Streams that hold: chunk 0 at once, the rest together after `holdMs` (or when the client leaves). */
function holdStream(holdMs: number): ReadableStream<Uint8Array> {
  return sseStream((i) => (i === 1 ? holdMs : 0));
}

export function handle(body: string): Response {
  if (!STREAMING.test(body)) return new Response(completion, { headers: JSON_HEADERS });
  const hold = HOLD.exec(body);
  const stream = hold?.[1] ? holdStream(Number(hold[1])) : sseStream(() => STREAM_INTERVAL_MS);
  return new Response(stream, { headers: SSE_HEADERS });
}

if (import.meta.main) {
  const port = Number(process.argv[2] ?? "0");
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port,
    idleTimeout: 0,
    async fetch(request) {
      if (request.method !== "POST") return Response.json({ active_streams: activeStreams });
      return handle(await request.text());
    },
  });
  console.log(`listening ${server.port}`);
}
