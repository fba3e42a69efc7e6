// The TUI's live feed reads GET /admin/v1/events with eventsource-parser: CRLF-framed events and
// events split anywhere across chunks (inside a line ending, inside a UTF-8 character) come out
// whole, the keep-alive comment is skipped, and HttpFeed hands the parsed request on.
import { afterEach, expect, test } from "bun:test";
import { type FeedState, HttpFeed, sseFrames } from "../../admin-tui/feed.ts";
import type { RequestEvent } from "../../admin-tui/types.ts";
import { waitFor } from "../helpers/wait.ts";
import { requestEvent } from "./tui-fixture.tsx";

const request = requestEvent({ key_name: "café ✓", model: "modelx-5.5" });

/** The feed as the gateway sends it, with `eol` ending each line. */
function feedText(eol: string): string {
  return [
    `event: ready${eol}data: {"queue":1024}${eol}${eol}`,
    `: keep-alive${eol}${eol}`,
    `event: request${eol}data: ${JSON.stringify(request)}${eol}${eol}`,
    `data: first line${eol}data: second line${eol}${eol}`,
  ].join("");
}

const expected = [
  { event: "ready", data: '{"queue":1024}' },
  { event: "request", data: JSON.stringify(request) },
  { event: "message", data: "first line\nsecond line" },
];

/** `bytes` as a stream of chunks of `size` bytes. */
function chunked(bytes: Uint8Array, size: number): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(at, at + size));
      at += size;
    },
  });
}

async function framesOf(body: ReadableStream<Uint8Array>) {
  const frames: { event: string; data: string }[] = [];
  for await (const frame of sseFrames(body)) frames.push(frame);
  return frames;
}

test("CRLF-framed events are read, whole, as LF-framed ones are", async () => {
  for (const eol of ["\r\n", "\n"]) {
    expect(await framesOf(chunked(new TextEncoder().encode(feedText(eol)), 4096))).toEqual(expected);
  }
});

test("events split across chunks anywhere — inside a CRLF, inside a UTF-8 character — come out whole", async () => {
  const bytes = new TextEncoder().encode(feedText("\r\n"));
  for (const size of [1, 2, 3, 5, 7, 64]) {
    expect({ size, frames: await framesOf(chunked(bytes, size)) }).toEqual({ size, frames: expected });
  }
});

let server: ReturnType<typeof Bun.serve> | undefined;
afterEach(() => server?.stop(true));

test("HttpFeed reads a CRLF feed sent in small pieces: live, then the request event", async () => {
  const bytes = new TextEncoder().encode(feedText("\r\n"));
  let authorization: string | null = null;
  server = Bun.serve({
    port: 0,
    fetch(req) {
      authorization = req.headers.get("authorization");
      let at = 0;
      // The pieces, then the stream stays open as the gateway's does.
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (at >= bytes.length) return new Promise<void>(() => {});
          controller.enqueue(bytes.slice(at, at + 3));
          at += 3;
        },
      });
      return new Response(body, { headers: { "content-type": "text/event-stream" } });
    },
  });
  const events: RequestEvent[] = [];
  const states: FeedState["kind"][] = [];
  const stop = new HttpFeed(`http://127.0.0.1:${server.port}`, "mga-test").subscribe(
    (e) => events.push(e),
    (s) => states.push(s.kind),
  );
  try {
    await waitFor("the request event", () => events.length > 0);
    expect(events).toEqual([request]);
    expect(states).toEqual(["connecting", "live"]);
    expect(authorization as string | null).toBe("Bearer mga-test");
  } finally {
    stop();
  }
});
