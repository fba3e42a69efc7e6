// The stream relay reading an attempt's guarded body itself (src/pipeline/relay/stream.ts over
// src/upstream/guard.ts GuardedBody, as the call stage hands it on, and through translateReader):
// the idle timeout still breaks a silent stream with its own error event, the lease is released
// once with the outcome, a cut stream is billed what was delivered and a whole one its final usage;
// and the keep-alive, kept without a clock read per write, still goes out while the upstream is silent.
import { describe, expect, test } from "bun:test";
import { relayStream } from "../../src/pipeline/relay/stream.ts";
import { type StreamTap, UsageTap } from "../../src/pipeline/relay/tap.ts";
import { translateReader } from "../../src/pipeline/relay/translated.ts";
import { streamUsage } from "../../src/protocols/usage.ts";
import { AttemptGuard, type BodyReader, type ResolvedTimeouts } from "../../src/upstream/guard.ts";
import { LONG_TIMEOUTS, recordingLease } from "../helpers/attempt-guard.ts";
import { relayToEnd } from "../helpers/relay.ts";
import { waitFor } from "../helpers/wait.ts";

const encoder = new TextEncoder();

const chunk = (content: string) =>
  `data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":${JSON.stringify(content)}},"finish_reason":null}]}\n\n`;
const FINISH =
  'data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n';
const USAGE =
  'data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}}\n\n';

/** An upstream answer sending `events` (each after `gapMs`) and then ending, or hanging when `hang`. */
function upstream(events: string[], gapMs: number, hang: boolean): Response {
  let cancelled = false;
  const stream = new ReadableStream<Uint8Array>({
    async start(controller) {
      for (const e of events) {
        if (gapMs > 0) await Bun.sleep(gapMs);
        if (cancelled) return;
        controller.enqueue(encoder.encode(e));
      }
      if (!hang) controller.close();
    },
    cancel() {
      cancelled = true;
    },
  });
  return new Response(stream);
}

async function relayed(
  response: Response,
  timeouts: ResolvedTimeouts,
  options: { keepaliveMs?: number; translate?: boolean } = {},
) {
  const l = recordingLease();
  const guard = new AttemptGuard("up", timeouts, new AbortController().signal);
  const body = await guard.openBody(response, l);
  if (body === undefined) throw new Error("no body");
  const usage = streamUsage("chat");
  let source: BodyReader = body;
  let tap: StreamTap = new UsageTap("chat", usage);
  if (options.translate) {
    const t = translateReader(
      { from: "chat", to: "messages", model: "m", inputEstimate: 7, request: { model: "m" } },
      body,
      usage,
    );
    source = t.body;
    tap = t.tap;
  }
  const { text, outcome } = await relayToEnd({
    body: source,
    tap,
    abort: guard.stop,
    keepaliveMs: options.keepaliveMs ?? 60_000,
  });
  return { text, outcome, guard, lease: l, tap };
}

describe("the relay over a guarded body", () => {
  test("a whole stream is relayed, billed its final usage, and the lease released once as a success", async () => {
    const r = await relayed(
      upstream([chunk("a"), chunk("b"), FINISH, USAGE, "data: [DONE]\n\n"], 0, false),
      LONG_TIMEOUTS,
    );
    expect(r.outcome).toBe("complete");
    expect(r.text).toContain("[DONE]");
    expect(r.lease.outcomes).toEqual(["success"]);
    const { usage, source } = r.tap.usage(99, 1000);
    expect(source).toBe("reported");
    expect(usage.outputTokens).toBe(3);
    expect(r.guard.fired).toBeUndefined();
  });

  for (const translate of [false, true]) {
    test(`silence past idle_ms mid-stream ends it with the idle timeout's error, billed what was delivered (${translate ? "translated" : "native"})`, async () => {
      const r = await relayed(
        upstream([chunk("hello there"), chunk(" general")], 5, true),
        { ...LONG_TIMEOUTS, idle_ms: 60 },
        { translate },
      );
      expect(r.guard.fired).toBe("idle");
      expect(r.outcome).toBe("broken");
      expect(r.text).toContain("idle timeout");
      expect(r.text).toContain("hello there");
      expect(r.lease.outcomes).toEqual(["failure"]);
      const { usage, source } = r.tap.usage(99, 1000);
      expect(source).toBe("counted");
      expect(usage.outputTokens).toBeGreaterThan(0);
    });
  }

  test("chunks that keep coming under idle_ms do not trip it; the total timeout still ends the stream", async () => {
    const events = Array.from({ length: 200 }, (_, i) => chunk(`t${i}`));
    const r = await relayed(upstream(events, 10, true), { ...LONG_TIMEOUTS, idle_ms: 400, total_ms: 600 });
    expect(r.guard.fired).toBe("total");
    expect(r.outcome).toBe("broken");
    expect(r.text).toContain("total timeout");
    expect(r.lease.outcomes).toEqual(["failure"]);
  });

  test("no first byte within first_byte_ms fails the attempt before the relay starts", async () => {
    const guard = new AttemptGuard(
      "up",
      { ...LONG_TIMEOUTS, first_byte_ms: 30 },
      new AbortController().signal,
    );
    const thrown = await guard.openBody(upstream([], 0, true), recordingLease()).catch((e: unknown) => e);
    expect(String(thrown)).toContain("first-byte timeout");
    expect(guard.fired).toBe("first_byte");
  });

  test("a silent upstream gets keep-alives, again after each keep-alive interval", async () => {
    const l = recordingLease();
    const guard = new AttemptGuard("up", LONG_TIMEOUTS, new AbortController().signal);
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => {
      release = r;
    });
    const response = new Response(
      new ReadableStream<Uint8Array>({
        async start(controller) {
          controller.enqueue(encoder.encode(chunk("a")));
          await held;
          controller.enqueue(encoder.encode(FINISH));
          controller.enqueue(encoder.encode("data: [DONE]\n\n"));
          controller.close();
        },
      }),
    );
    const body = await guard.openBody(response, l);
    if (body === undefined) throw new Error("no body");
    const out = relayStream({
      body,
      tap: new UsageTap("chat", streamUsage("chat")),
      abort: guard.stop,
      keepaliveMs: 40,
      dropUsageChunk: false,
      onFirstByte: () => undefined,
      onEnd: async () => undefined,
    });
    const reader = out.getReader();
    const decoder = new TextDecoder();
    let text = "";
    const reading = (async () => {
      for (;;) {
        const step = await reader.read();
        if (step.done) return;
        text += decoder.decode(step.value);
      }
    })();
    // Two keep-alives: the first after the event, the next after the first (its own write restarts the silence).
    await waitFor("two keep-alives", () => text.split(": keep-alive").length - 1 >= 2);
    release();
    await reading;
    expect(text).toContain("[DONE]");
    expect(l.outcomes).toEqual(["success"]);
  });
});
