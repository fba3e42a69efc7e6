// The upstream HTTP module on fetch: the connect-timeout probe must not mistake a slow upstream
// for a dead one, a refused connection fails over at once, and the caller's signal cancels.
import { afterAll, describe, expect, test } from "bun:test";
import { postUpstream, UpstreamUnreachable } from "../../src/upstream/http.ts";

// Accepts connections and never answers: alive, but slow to its first byte.
const silent = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
// A port nothing listens on: connections are refused at once.
const closed = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
const closedPort = closed.port;
closed.stop(true);

afterAll(() => silent.stop(true));

function call(url: string, signal: AbortSignal, connectMs = 50) {
  return postUpstream({ channel: "c", url, headers: {}, body: "{}", signal, connectMs });
}

describe("postUpstream", () => {
  test("an upstream that accepts but is slow is not a connect timeout; the caller's signal cancels it", async () => {
    const abort = new AbortController();
    const pending = call(`http://127.0.0.1:${silent.port}/v1/x`, abort.signal);
    let settled = false;
    pending.then(
      () => {
        settled = true;
      },
      () => {
        settled = true;
      },
    );
    await Bun.sleep(300); // six connect windows: the probe connected, so nothing failed the call
    expect(settled).toBe(false);
    abort.abort(new Error("client went away"));
    await expect(pending).rejects.toThrow("client went away");
  });

  test("a refused connection is UpstreamUnreachable (worth a failover)", async () => {
    const error = await call(`http://127.0.0.1:${closedPort}/v1/x`, new AbortController().signal).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(UpstreamUnreachable);
    expect((error as UpstreamUnreachable).code).toBe("upstream_unreachable");
  });

  test("bodies are requested without content encoding, so they are relayed as sent", async () => {
    let seen: string | null = "unset";
    const server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch(request) {
        seen = request.headers.get("accept-encoding");
        return new Response("ok");
      },
    });
    try {
      const response = await call(`http://127.0.0.1:${server.port}/`, new AbortController().signal);
      expect(await response.text()).toBe("ok");
      expect(seen).toBe("identity");
    } finally {
      server.stop(true);
    }
  });
});
