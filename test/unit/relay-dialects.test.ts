// The stream relay and its usage tap over every SSE dialect (test/helpers/sse-dialects.ts), cut at
// random byte boundaries: the usage read is the upstream's exact report, the stream is complete,
// the client gets the upstream's bytes unchanged, and only the gateway's own Chat usage chunk is
// ever dropped — recognized by its parsed shape, whatever the framing.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { relayStream } from "../../src/pipeline/relay/stream.ts";
import { UsageTap } from "../../src/pipeline/relay/tap.ts";
import { translateStream } from "../../src/pipeline/relay/translated.ts";
import { streamUsage } from "../../src/protocols/usage.ts";
import { EventSplitter } from "../../src/wire/sse.ts";
import type { TextProtocol } from "../../src/wire/text-form.ts";
import { relayToEnd } from "../helpers/relay.ts";
import {
  BASE,
  chatStream,
  clientView,
  DIALECTS,
  type Dialect,
  REPORTED,
  responsesStream,
  STREAMS,
  TEXT,
} from "../helpers/sse-dialects.ts";

const encoder = new TextEncoder();

/** `bytes` cut at the given positions (sorted, deduplicated, inside the array). */
function cut(bytes: Uint8Array, at: number[]): Uint8Array[] {
  const points = [...new Set(at.map((p) => p % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let start = 0;
  for (const p of [...points, bytes.length]) {
    if (p > start) out.push(bytes.slice(start, p));
    start = Math.max(start, p);
  }
  return out;
}

async function relay(protocol: TextProtocol, chunks: Uint8Array[], dropUsageChunk = false) {
  const tap = new UsageTap(protocol, streamUsage(protocol));
  let i = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(c) {
      const next = chunks[i++];
      if (next === undefined) c.close();
      else c.enqueue(next);
    },
  });
  const { text, outcome } = await relayToEnd({ body, tap, dropUsageChunk });
  return { tap, outcome, text };
}

function expectExact(tap: UsageTap) {
  const { usage, source } = tap.usage(999, 4000);
  expect(source).toBe("reported");
  expect(usage.inputTokens).toBe(REPORTED.input);
  expect(usage.cachedInputTokens).toBe(REPORTED.cached);
  expect(usage.outputTokens).toBe(REPORTED.output);
}

describe("event ends", () => {
  /** Event ends by the definition: a terminator (CRLF, LF, CR) closing an empty line. */
  function reference(text: string): number[] {
    const ends: number[] = [];
    let lineEmpty = true;
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (c === "\n" && text[i - 1] === "\r") {
        if (ends.at(-1) === i) ends[ends.length - 1] = i + 1;
      } else if (c === "\r" || c === "\n") {
        if (lineEmpty) ends.push(i + 1);
        lineEmpty = true;
      } else lineEmpty = false;
    }
    return ends;
  }

  test("any split of any mix of line ends: the splitter finds the reference's last end per chunk", () => {
    const text = fc
      .array(fc.constantFrom("a", ":", "\r", "\n", "\r\n"), { maxLength: 60 })
      .map((a) => a.join(""));
    fc.assert(
      fc.property(text, fc.array(fc.nat(), { maxLength: 10 }), (s, at) => {
        const chunks = cut(encoder.encode(s), at);
        const starts = new Set<number>();
        let offset = 0;
        for (const chunk of chunks) {
          starts.add(offset);
          offset += chunk.length;
        }
        // A CRLF cut between chunks ends its event at the CR: the relay cannot wait for the LF.
        const want = reference(s).map((e) =>
          s[e - 1] === "\n" && s[e - 2] === "\r" && starts.has(e - 1) ? e - 1 : e,
        );
        const splitter = new EventSplitter();
        offset = 0;
        for (const chunk of chunks) {
          const expected = want.filter((e) => e > offset && e <= offset + chunk.length).at(-1) ?? -1;
          const end = splitter.lastEnd(chunk);
          expect(end === -1 ? -1 : end + offset).toBe(expected);
          offset += chunk.length;
        }
      }),
      { numRuns: 3000 },
    );
  });
});

describe("relay over SSE dialects", () => {
  for (const protocol of ["chat", "responses", "messages"] as const) {
    for (const dialect of DIALECTS) {
      test(`${protocol}: ${dialect.name}, in 7-byte slices`, async () => {
        const stream = STREAMS[protocol](dialect);
        const bytes = encoder.encode(stream);
        const at = Array.from({ length: Math.ceil(bytes.length / 7) }, (_, i) => i * 7);
        const { tap, outcome, text } = await relay(protocol, cut(bytes, at));
        expect(outcome).toBe("complete");
        expectExact(tap);
        expect(text).toBe(stream);
        expect(clientView(protocol, text).text).toBe(TEXT);
      });
    }
  }

  test("any split of any dialect: exact usage, bytes unchanged, complete", async () => {
    const protocols = fc.constantFrom<TextProtocol>("chat", "responses", "messages");
    await fc.assert(
      fc.asyncProperty(
        protocols,
        fc.constantFrom(...DIALECTS),
        fc.array(fc.nat(), { maxLength: 40 }),
        async (protocol, dialect, at) => {
          const stream = STREAMS[protocol](dialect);
          const { tap, outcome, text } = await relay(protocol, cut(encoder.encode(stream), at));
          expect(outcome).toBe("complete");
          expectExact(tap);
          expect(text).toBe(stream);
        },
      ),
      { numRuns: 150 },
    );
  });

  test("the gateway's Chat usage chunk is dropped by its parsed shape, and only it", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...DIALECTS), fc.array(fc.nat(), { maxLength: 30 }), async (d, at) => {
        const stream = chatStream(d);
        const { tap, outcome, text } = await relay("chat", cut(encoder.encode(stream), at), true);
        expect(outcome).toBe("complete");
        expectExact(tap);
        const seen = clientView("chat", text);
        expect(seen.text).toBe(TEXT);
        expect(seen.usageChunks).toBe(0);
        // Nothing else changed: with the usage chunk left in its own dialect, the bytes match.
        if (d.usage !== "separate") expect(text).toBe(stream);
        else expect(text.length).toBeLessThan(stream.length);
      }),
      { numRuns: 100 },
    );
  });

  test("a stream cut off before its end is broken and ends with the protocol's error event", async () => {
    const stream = responsesStream(DIALECTS[0] as Dialect);
    const bytes = encoder.encode(stream);
    const { tap, outcome, text } = await relay("responses", [bytes.slice(0, Math.floor(bytes.length / 2))]);
    expect(outcome).toBe("broken");
    expect(tap.usage(7, 4000).source).toBe("counted");
    expect(text).toContain("event: error");
    expect(text).toContain("event: response.failed");
  });

  test("a last event without its blank line still counts and is closed for the client", async () => {
    const stream = chatStream(DIALECTS[0] as Dialect).replace(/\n\n$/, "");
    const { tap, outcome, text } = await relay("chat", [encoder.encode(stream)]);
    expect(outcome).toBe("complete");
    expect(tap.terminal).toBe(true);
    expect(text).toBe(`${stream}\n\n`);
  });
});

describe("an event that never ends", () => {
  test("past the cap the upstream is cancelled and the client gets whole events and the error event", async () => {
    const head = encoder.encode(
      'event: response.created\ndata: {"type":"response.created","response":{"id":"r","output":[]}}\n\n',
    );
    const filler = encoder.encode("x".repeat(1024));
    const total = 64;
    let pulled = 0;
    let cancelled = false;
    let aborted = false;
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        if (pulled === 0) c.enqueue(head);
        else if (pulled === 1) c.enqueue(encoder.encode("event: response.output_text.delta\ndata: "));
        else if (pulled < total) c.enqueue(filler);
        else c.close();
        pulled++;
      },
      cancel() {
        cancelled = true;
      },
    });
    const { text, outcome } = await relayToEnd({
      body,
      tap: new UsageTap("responses", streamUsage("responses")),
      abort: () => {
        aborted = true;
      },
      maxEventBytes: 8 * 1024,
    });
    expect(outcome).toBe("broken");
    expect(aborted).toBe(true);
    expect(cancelled).toBe(true);
    // Stopped near the cap, not after reading everything the upstream would send.
    expect(pulled).toBeLessThan(total / 2);
    expect(text.startsWith(new TextDecoder().decode(head))).toBe(true);
    expect(text).not.toContain("xxxx");
    expect(text).toContain("event: response.failed");
  });
});

describe("settling fails", () => {
  test("the client stream ends in error instead of staying open", async () => {
    const stream = chatStream(DIALECTS[0] as Dialect);
    const out = relayStream({
      body: new Response(stream).body as ReadableStream<Uint8Array>,
      tap: new UsageTap("chat", streamUsage("chat")),
      abort: () => undefined,
      keepaliveMs: 60_000,
      dropUsageChunk: false,
      onFirstByte: () => undefined,
      onEnd: () => Promise.reject(new Error("store down")),
    });
    // Before the fix the stream never ended: the test timed out.
    await expect(new Response(out).text()).rejects.toThrow("store down");
  });
});

describe("a client slower than the upstream", () => {
  test("the relay stops reading the upstream once the client's queue is full", async () => {
    const event = encoder.encode(
      `data: ${JSON.stringify({ id: "c", choices: [{ index: 0, delta: { content: "y".repeat(64 * 1024) } }] })}\n\n`,
    );
    const total = 200;
    const done = encoder.encode("data: [DONE]\n\n");
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        if (pulled++ < total) c.enqueue(event);
        else {
          c.enqueue(done);
          c.close();
        }
      },
    });
    const out = relayStream({
      body,
      tap: new UsageTap("chat", streamUsage("chat")),
      abort: () => undefined,
      keepaliveMs: 60_000,
      dropUsageChunk: false,
      onFirstByte: () => undefined,
      onEnd: async () => undefined,
    });
    const reader = out.getReader();
    // The client reads nothing for a while: the relay must not buffer the whole 12.8 MB answer.
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(pulled).toBeLessThan(total / 4);
    // Reading drains it all, in order.
    let bytes = 0;
    for (let r = await reader.read(); !r.done; r = await reader.read()) bytes += r.value.byteLength;
    expect(bytes).toBe(total * event.byteLength + done.byteLength);
  });
});

describe("a translated stream whose upstream event never ends", () => {
  test("errors past the cap and cancels the upstream instead of buffering it", async () => {
    const filler = encoder.encode("x".repeat(1024));
    const total = 64;
    let pulled = 0;
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        if (pulled === 0)
          c.enqueue(encoder.encode('data: {"id":"c","choices":[{"index":0,"delta":{"content":"'));
        else if (pulled < total) c.enqueue(filler);
        else c.close();
        pulled++;
      },
      cancel() {
        cancelled = true;
      },
    });
    const translation = { from: "chat", to: "responses", model: "m", inputEstimate: 1, request: {} } as const;
    const { body: out } = translateStream(translation, body, streamUsage("chat"), 8 * 1024);
    await expect(new Response(out).text()).rejects.toThrow("larger than 8192 bytes");
    expect(cancelled).toBe(true);
    expect(pulled).toBeLessThan(total / 2);
  });
});

describe("a translated stream's tap", () => {
  const upstream = (text: string) => new Response(text).body ?? new ReadableStream<Uint8Array>();
  const messages = STREAMS.messages(DIALECTS[0] ?? BASE);

  test("the client side from what the writer wrote, the usage the upstream's own", async () => {
    const translation = {
      from: "messages",
      to: "responses",
      model: "m",
      inputEstimate: 1,
      request: {},
    } as const;
    const { body, tap } = translateStream(translation, upstream(messages), streamUsage("messages"));
    expect(tap.created).toBeUndefined();
    const text = await new Response(body).text();
    expect(tap.complete).toBe(true);
    expect(tap.created?.status).toBe("in_progress");
    expect(text).toContain(`"id":"${String(tap.created?.id)}"`);
    const { usage, source } = tap.usage(999, 4000);
    expect(source).toBe("reported");
    expect(usage.outputTokens).toBe(REPORTED.output);
  });

  test("an upstream that ends before its last event leaves the client's stream incomplete", async () => {
    const cut = messages.slice(0, messages.indexOf("message_delta"));
    const translation = { from: "messages", to: "chat", model: "m", inputEstimate: 1, request: {} } as const;
    const { body, tap } = translateStream(translation, upstream(cut), streamUsage("messages"));
    await new Response(body).text();
    expect(tap.complete).toBe(false);
  });

  test("Chat: the usage-only chunk is written only when the client asked for it", async () => {
    const chunks = async (includeUsage: boolean) => {
      const t = {
        from: "messages",
        to: "chat",
        model: "m",
        inputEstimate: 1,
        request: {},
        includeUsage,
      } as const;
      const { body } = translateStream(t, upstream(messages), streamUsage("messages"));
      return (await new Response(body).text()).split("\n\n").filter((e) => e.includes('"choices":[]'));
    };
    expect(await chunks(true)).toHaveLength(1);
    expect(await chunks(false)).toEqual([]);
  });
});
