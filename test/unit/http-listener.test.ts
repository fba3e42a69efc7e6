// The listener's last line of defence and the router's view of the request target: a failure
// that escapes the app (even its error handler) is a 500 in the OpenAI error shape with its cause
// logged, and requests
// with short, missing or IPv6 Hosts or a #fragment are re-issued under a URL the router reads.
import { afterEach, describe, expect, spyOn, test } from "bun:test";
import { Elysia } from "elysia";
import { loadConfig } from "../../src/config/load.ts";
import { type Listener, listen } from "../../src/http/listener.ts";
import { routable, routerReadsPath } from "../../src/http/target.ts";

let listener: Listener | undefined;
afterEach(async () => {
  await listener?.drain(0);
  listener = undefined;
});

describe("listener", () => {
  test("a failure outside the handlers is a 500 with the error logged, never an empty line", async () => {
    const config = loadConfig({ env: {}, flags: { listen: "127.0.0.1:0" } });
    const app = new Elysia()
      .onError(() => {
        throw new TypeError("boom outside the edge");
      })
      .get("/v1/models", () => {
        throw new Error("the handler fails");
      });
    listener = listen(config, app);
    const written: string[] = [];
    const spy = spyOn(process.stderr, "write").mockImplementation((chunk) => {
      written.push(String(chunk));
      return true;
    });
    try {
      const response = await fetch(`${listener.url}/v1/models`);
      expect(response.status).toBe(500);
      const body = (await response.json()) as { error: { type: string } };
      expect(body.error.type).toBe("server_error");
      expect(response.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]{32}$/);
    } finally {
      spy.mockRestore();
    }
    expect(written.join("")).toContain("TypeError: boom outside the edge");
  });
});

describe("request targets", () => {
  test("URLs the router reads as they are stay untouched", () => {
    for (const url of [
      "http://127.0.0.1:8080/v1/models",
      "https://gateway.example/v1/x?y=1",
      "http://[::1]:8080/v1/models",
    ]) {
      expect(routerReadsPath(url)).toBe(true);
    }
  });

  test("short hosts, relative targets, fragments and malformed Hosts are re-issued with the path and query sent", () => {
    const cases: [string, string][] = [
      ["http://x/v1/models", "http://localhost/v1/models"],
      ["http://api/v1/models?limit=2", "http://localhost/v1/models?limit=2"],
      ["http://gw:80/v1/models#frag", "http://localhost/v1/models"],
      ["https://a/v1/models", "https://localhost/v1/models"],
      ["/v1/models", "http://localhost/v1/models"],
      ["//v1/models", "http://localhost//v1/models"],
      // Bun builds the URL from any Host: these do not parse.
      ["http://[::1/v1/models", "http://localhost/v1/models"],
      ["http://a:99999/v1/models?limit=2", "http://localhost/v1/models?limit=2"],
      ["http://%zz/v1/chat/completions#x", "http://localhost/v1/chat/completions"],
      ["https://bad host/v1/models", "https://localhost/v1/models"],
    ];
    for (const [given, expected] of cases) {
      expect(routerReadsPath(given)).toBe(false);
      // new Request() refuses relative and unparseable URLs; Bun's server hands them over as they are.
      const request = URL.canParse(given)
        ? new Request(given)
        : ({ url: given, headers: new Headers(), method: "GET" } as unknown as Request);
      expect(routable(request).url).toBe(expected);
    }
  });
});
