// The media benchmark's upstream (bench/media.ts), its own process: fixed answers, built once, for
// Chat Completions (the bench's chat answer), embeddings (one 1,536-value vector, as floats or
// base64), speech (eight 4 KB audio chunks, the first at once, then 20 ms apart: a server that
// speaks as it goes) and transcriptions (the upload read whole, then a JSON transcript).
// Run: `bun bench/media-upstream.ts PORT`; prints `listening PORT` when ready.
import { ANSWERS } from "./answers.ts";

const port = Number(process.argv[2]);
const vector = Array.from({ length: 1536 }, (_, i) => Math.fround(Math.sin(i) / 40));
const floats = Float32Array.from(vector);
const base64 = Buffer.from(floats.buffer).toString("base64");
const embedding = (format: string) =>
  JSON.stringify({
    object: "list",
    data: [{ object: "embedding", index: 0, embedding: format === "base64" ? base64 : vector }],
    model: "text-embedding-3-small",
    usage: { prompt_tokens: 8, total_tokens: 8 },
  });
const FLOAT_ANSWER = embedding("float");
const BASE64_ANSWER = embedding("base64");
const CHUNK = new Uint8Array(4096).fill(0x55);
const JSON_HEADERS = { "content-type": "application/json" };

function speech(): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (sent > 0) await Bun.sleep(20);
      controller.enqueue(CHUNK);
      if (++sent === 8) controller.close();
    },
  });
}

Bun.serve({
  hostname: "127.0.0.1",
  port,
  idleTimeout: 0,
  async fetch(request) {
    const { pathname } = new URL(request.url);
    if (pathname === "/v1/chat/completions") {
      await request.arrayBuffer();
      return new Response(ANSWERS.chat.answer, { headers: JSON_HEADERS });
    }
    if (pathname === "/v1/embeddings") {
      const body = (await request.json()) as { encoding_format?: string };
      return new Response(body.encoding_format === "base64" ? BASE64_ANSWER : FLOAT_ANSWER, {
        headers: JSON_HEADERS,
      });
    }
    if (pathname === "/v1/audio/speech") {
      await request.arrayBuffer();
      return new Response(speech(), { headers: { "content-type": "audio/mpeg" } });
    }
    if (pathname === "/v1/audio/transcriptions") {
      await request.arrayBuffer();
      return Response.json({ text: "fixed transcript", usage: { type: "duration", seconds: 1 } });
    }
    return new Response("not found", { status: 404 });
  },
});
console.log(`listening ${port}`);
