// `modelgate serve` as an operator meets it: bad configuration, HTTPS with HTTP/2, graceful shutdown.
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:http2";
import { join } from "node:path";
import { adminTokenIn, binary, runCli, startGateway, tempDir } from "../helpers/gateway.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function dir(): string {
  const d = tempDir();
  dirs.push(d);
  return d;
}

describe("configuration at start", () => {
  test("an unknown field fails the start with its path and a non-zero exit status", async () => {
    const d = dir();
    const file = join(d, "bad.toml");
    writeFileSync(
      file,
      '[server]\nlisten = "127.0.0.1:0"\n\n[store]\nurl = "sqlite://x.db"\npool_sise = 4\n',
    );
    const result = await runCli(["serve", "--config", file]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain("store.pool_sise: unknown field");
  });

  test("a flag that contradicts the file is refused, naming both", async () => {
    const d = dir();
    const file = join(d, "c.toml");
    writeFileSync(file, '[server]\nlisten = "127.0.0.1:0"\n');
    const result = await runCli(["serve", "--config", file, "--listen", "127.0.0.1:1"]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain("server.listen is set twice");
  });

  test("an unknown flag is a usage error (exit 2)", async () => {
    const result = await runCli(["serve", "--lisen", "127.0.0.1:0"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--lisen");
  });
});

describe("HTTPS", () => {
  test("with a certificate configured, a client that trusts it gets /v1/models over HTTP/1.1 and HTTP/2", async () => {
    const d = dir();
    const cert = join(d, "cert.pem");
    const key = join(d, "key.pem");
    const openssl = Bun.spawnSync(
      [
        "openssl",
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        key,
        "-out",
        cert,
        "-days",
        "1",
        "-subj",
        "/CN=localhost",
        "-addext",
        "subjectAltName=IP:127.0.0.1,DNS:localhost",
      ],
      { stderr: "pipe" },
    );
    expect(openssl.exitCode).toBe(0);
    const gw = await startGateway({ dir: d, args: ["--tls-cert", cert, "--tls-key", key] });
    try {
      expect(gw.url).toStartWith("https://127.0.0.1:");
      const ca = readFileSync(cert, "utf8");
      const response = await fetch(`${gw.url}/v1/models`, {
        headers: { authorization: `Bearer ${gw.key}` },
        tls: { ca },
      });
      expect(response.status).toBe(200);
      // The 15 text and image models and the 9 media models (docs/endpoints-media.md).
      expect(((await response.json()) as { data: unknown[] }).data).toHaveLength(24);
      // A client that does not trust the certificate is refused by TLS itself.
      await expect(fetch(`${gw.url}/v1/models`)).rejects.toThrow();

      const h2 = await new Promise<{ status: number; body: string; alpn: string | false }>(
        (resolve, reject) => {
          const session = connect(gw.url, { ca });
          session.on("error", reject);
          const stream = session.request({ ":path": "/v1/models", authorization: `Bearer ${gw.key}` });
          let status = 0;
          let body = "";
          stream.on("response", (headers) => {
            status = Number(headers[":status"]);
          });
          stream.setEncoding("utf8");
          stream.on("data", (chunk: string) => {
            body += chunk;
          });
          stream.on("end", () => {
            const alpn = session.alpnProtocol ?? false;
            session.close();
            resolve({ status, body, alpn });
          });
          stream.on("error", reject);
        },
      );
      expect(h2.alpn).toBe("h2");
      expect(h2.status).toBe(200);
      expect((JSON.parse(h2.body) as { data: unknown[] }).data).toHaveLength(24);
    } finally {
      await gw.stop();
    }
  });
});

describe("graceful shutdown", () => {
  // In-flight streams finishing during the drain are tested with the streaming endpoints (resilience issue).
  test("SIGTERM stops accepting new connections, drains, and exits 0", async () => {
    const gw = await startGateway({ dir: dir(), args: ["--shutdown-deadline", "10"] });
    expect(
      (await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${gw.key}` } })).status,
    ).toBe(200);
    gw.proc.kill("SIGTERM");
    expect(await gw.proc.exited).toBe(0);
    expect(gw.logs()).toContain('"msg":"shutting down: no new connections, finishing in-flight requests"');
    expect(gw.logs()).toContain('"msg":"stopped","drained":true');
    await expect(fetch(`${gw.url}/healthz`)).rejects.toThrow();
  });

  test("an open admin event stream (a console's live log) ends at the start of the drain", async () => {
    // The deadline is long: were the feed counted as in flight, the drain would end at it, not drained.
    const gw = await startGateway({ dir: dir(), args: ["--shutdown-deadline", "60"] });
    const token = adminTokenIn(gw.logs());
    const feed = await fetch(`${gw.url}/admin/v1/events`, { headers: { authorization: `Bearer ${token}` } });
    expect(feed.status).toBe(200);
    const body = feed.body;
    if (body === null) throw new Error("no event stream");
    const reader = body.getReader();
    const decoder = new TextDecoder();
    let text = decoder.decode((await reader.read()).value);
    expect(text).toContain("event: ready");
    const startedAt = Date.now();
    gw.proc.kill("SIGTERM");
    expect(await gw.proc.exited).toBe(0);
    const tookMs = Date.now() - startedAt;
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
      if (done) break;
      text += decoder.decode(value);
    }
    expect(text).toContain("event: closing");
    expect(gw.logs()).toContain('"msg":"stopped","drained":true,"closed_in_flight":0');
    expect(gw.logs()).not.toContain("shutdown deadline reached");
    console.log(`SIGTERM with an open event stream: exited in ${tookMs} ms`);
  }, 90_000);
});

test("the executable prints its version and help", async () => {
  const version = Bun.spawnSync([binary(), "--version"]);
  expect(version.stdout.toString().trim()).toMatch(/^\d+\.\d+\.\d+$/);
  const help = await runCli([]);
  expect(help.stdout).toContain("serve");
  expect(help.stdout).toContain("keys");
});
