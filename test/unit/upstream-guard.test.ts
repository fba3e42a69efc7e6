// One upstream attempt under its timeouts (src/upstream/guard.ts), with bodies the test controls:
// first byte, idle and total timeouts each fail the attempt with their own code, the client's
// signal aborts it, a finished attempt's timers never fire, and the channel lease is released
// once with the outcome.
import { describe, expect, test } from "bun:test";
import { AttemptGuard } from "../../src/upstream/guard.ts";
import { GatewayError } from "../../src/wire/errors.ts";
import { LONG_TIMEOUTS, recordingLease } from "../helpers/attempt-guard.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

/** A body that sends `chunks` at the given delays (ms after the previous one) and then ends or hangs. */
function body(chunks: [number, string][], end: "close" | "hang" = "close"): Response {
  let cancelled = false;
  const stream = new ReadableStream<Uint8Array>({
    async start(controller) {
      for (const [delay, text] of chunks) {
        await Bun.sleep(delay);
        if (cancelled) return;
        controller.enqueue(bytes(text));
      }
      if (end === "close") controller.close();
    },
    cancel() {
      cancelled = true;
    },
  });
  return new Response(stream);
}

async function drain(response: Response): Promise<string> {
  return await response.text();
}

function codeOf(error: unknown): string | undefined {
  return error instanceof GatewayError ? (error.code ?? undefined) : undefined;
}

describe("attempt guard", () => {
  test("a body that finishes in time is relayed whole; the lease is released once as a success", async () => {
    const l = recordingLease();
    const guard = new AttemptGuard("up", LONG_TIMEOUTS, new AbortController().signal);
    const opened = await guard.open(
      body([
        [0, "a"],
        [5, "b"],
      ]),
      l,
    );
    expect(await drain(opened)).toBe("ab");
    expect(l.outcomes).toEqual(["success"]);
    expect(guard.timing.firstByteAt).toBeDefined();
    expect(guard.timing.endedAt).toBeDefined();
  });

  test("no first byte within first_byte_ms fails the attempt with upstream_first_byte_timeout", async () => {
    const guard = new AttemptGuard(
      "up",
      { ...LONG_TIMEOUTS, first_byte_ms: 30 },
      new AbortController().signal,
    );
    const thrown = await guard.open(body([], "hang"), recordingLease()).catch((e: unknown) => e);
    expect(codeOf(thrown)).toBe("upstream_first_byte_timeout");
    expect(guard.fired).toBe("first_byte");
    expect(guard.signal.aborted).toBe(true);
    guard.dispose();
  });

  test("silence longer than idle_ms after the first byte breaks the relayed body with the idle timeout", async () => {
    const l = recordingLease();
    const guard = new AttemptGuard("up", { ...LONG_TIMEOUTS, idle_ms: 40 }, new AbortController().signal);
    const opened = await guard.open(body([[0, "a"]], "hang"), l);
    const thrown = await drain(opened).catch((e: unknown) => e);
    expect(String(thrown)).toContain("idle timeout");
    expect(guard.fired).toBe("idle");
    expect(l.outcomes).toEqual(["failure"]);
  });

  test("chunks that keep coming do not trip the idle timeout, but the total timeout ends the exchange", async () => {
    const guard = new AttemptGuard(
      "up",
      { ...LONG_TIMEOUTS, idle_ms: 250, total_ms: 400 },
      new AbortController().signal,
    );
    const chunks: [number, string][] = Array.from({ length: 100 }, () => [10, "x"]);
    const opened = await guard.open(body(chunks, "hang"), recordingLease());
    const thrown = await drain(opened).catch((e: unknown) => e);
    expect(String(thrown)).toContain("total timeout");
    expect(guard.fired).toBe("total");
  });

  test("readAll reads a whole answer under the same timeouts and releases the lease", async () => {
    const l = recordingLease();
    const guard = new AttemptGuard("up", LONG_TIMEOUTS, new AbortController().signal);
    const read = await guard.readAll(
      body([
        [0, '{"a":'],
        [5, "1}"],
      ]),
      l,
    );
    expect(new TextDecoder().decode(read)).toBe('{"a":1}');
    expect(l.outcomes).toEqual(["success"]);

    const idle = new AttemptGuard("up", { ...LONG_TIMEOUTS, idle_ms: 30 }, new AbortController().signal);
    const thrown = await idle.readAll(body([[0, "{"]], "hang"), recordingLease()).catch((e: unknown) => e);
    expect(codeOf(thrown)).toBe("upstream_idle_timeout");
    idle.dispose();
  });

  test("readAll reads a declared small answer in one step: the first-byte deadline covers it whole", async () => {
    // A raw HTTP server: Bun.serve would send a streamed body chunked, without its length.
    const server = Bun.listen({
      hostname: "127.0.0.1",
      port: 0,
      socket: {
        async data(socket, request) {
          const hang = request.toString().startsWith("GET /hang");
          socket.write('HTTP/1.1 200 OK\r\ncontent-length: 7\r\nconnection: close\r\n\r\n{"a":');
          if (hang) return;
          await Bun.sleep(60);
          socket.end("1}");
        },
      },
    });
    const url = `http://127.0.0.1:${server.port}`;
    try {
      // A gap longer than idle_ms inside a declared body: no idle timeout, it is read as one piece.
      const l = recordingLease();
      const guard = new AttemptGuard("up", { ...LONG_TIMEOUTS, idle_ms: 20 }, new AbortController().signal);
      const read = await guard.readAll(await fetch(`${url}/slow`, { signal: guard.signal }), l);
      expect(new TextDecoder().decode(read)).toBe('{"a":1}');
      expect(guard.timing.firstByteAt).toBeDefined();
      expect(l.outcomes).toEqual(["success"]);

      // A declared body that stops short fails with the first-byte timeout.
      const hung = new AttemptGuard(
        "up",
        { ...LONG_TIMEOUTS, first_byte_ms: 80 },
        new AbortController().signal,
      );
      const response = await fetch(`${url}/hang`, { signal: hung.signal });
      const thrown = await hung.readAll(response, recordingLease()).catch((e: unknown) => e);
      expect(codeOf(thrown)).toBe("upstream_first_byte_timeout");
      hung.dispose();
    } finally {
      server.stop(true);
    }
  });

  test("the client's signal aborts the attempt and ends a pending read", async () => {
    const client = new AbortController();
    const guard = new AttemptGuard("up", LONG_TIMEOUTS, client.signal);
    const pending = guard.open(body([], "hang"), recordingLease()).catch((e: unknown) => e);
    await Bun.sleep(5);
    client.abort(new Error("client gone"));
    await pending;
    expect(guard.signal.aborted).toBe(true);
    expect(guard.fired).toBeUndefined();
    guard.dispose();
  });

  test("a disposed attempt's timers never fire", async () => {
    const guard = new AttemptGuard(
      "up",
      { connect_ms: 10, first_byte_ms: 10, idle_ms: 10, total_ms: 10 },
      new AbortController().signal,
    );
    guard.dispose();
    await Bun.sleep(40);
    expect(guard.fired).toBeUndefined();
    expect(guard.signal.aborted).toBe(false);
  });
});
