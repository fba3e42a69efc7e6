// Defects of issue 17 against the compiled binary: routing for any Host and request target,
// JSON bodies that are too deep or not UTF-8, image prompts counted in code points, truncated
// image uploads, body read timeouts (408) and client disconnects that are not logged as failures.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { adminTokenIn, balanceOf, type RunningGateway, startGateway } from "../helpers/gateway.ts";
import { hostPort, rawExchange, rawRequest, rawUpgrade } from "../helpers/raw-http.ts";
import { flatPng, halfMask } from "../unit/images-fixtures.ts";

let gw: RunningGateway;
let key: string;

beforeAll(async () => {
  gw = await startGateway({ config: "[server]\nbody_idle_timeout_seconds = 1\nbody_timeout_seconds = 3\n" });
  key = gw.key ?? "";
}, 30_000);
afterAll(async () => {
  await gw.dispose();
}, 30_000);

const chatBody = JSON.stringify({ model: "modelx-5.5", messages: [{ role: "user", content: "hi" }] });

describe("routing on the parsed path, for every Host", () => {
  const port = () => hostPort(gw.url).port;
  const hosts = () => ["x", "gw", "api", `[::1]:${port()}`, "[::1]", `127.0.0.1:${port()}`];

  test("GET /v1/models answers 200 whatever the Host", async () => {
    for (const host of hosts()) {
      const r = await rawRequest(gw.url, "GET /v1/models HTTP/1.1", [
        `Host: ${host}`,
        `Authorization: Bearer ${key}`,
      ]);
      expect({ host, status: r.status }).toEqual({ host, status: 200 });
      expect((JSON.parse(r.body) as { object: string }).object).toBe("list");
    }
  });

  test("a Host that makes the URL unparseable is routed on the path sent, never a 500", async () => {
    for (const host of ["[::1", "a:99999", "%zz"]) {
      const r = await rawRequest(gw.url, "GET /v1/models?limit=1 HTTP/1.1", [
        `Host: ${host}`,
        `Authorization: Bearer ${key}`,
      ]);
      expect({ host, status: r.status }).toEqual({ host, status: 200 });
      expect((JSON.parse(r.body) as { object: string }).object).toBe("list");
      // A WebSocket upgrade asked with such a Host is upgraded on the path sent.
      const upgrade = await rawUpgrade(gw.url, "/v1/responses", [
        `Host: ${host}`,
        "Upgrade: websocket",
        "Connection: Upgrade",
        "Sec-WebSocket-Version: 13",
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
        `Authorization: Bearer ${key}`,
      ]);
      expect({ host, status: upgrade.status }).toEqual({ host, status: 101 });
    }
  });

  test("a path with an extra first segment is 404 with a short Host, not the route behind it", async () => {
    const r = await rawRequest(gw.url, "GET /zz/v1/models HTTP/1.1", [
      "Host: x",
      `Authorization: Bearer ${key}`,
    ]);
    expect(r.status).toBe(404);
  });

  test("POST /v1/chat/completions with Host: api answers the chat", async () => {
    const r = await rawRequest(
      gw.url,
      "POST /v1/chat/completions HTTP/1.1",
      ["Host: api", `Authorization: Bearer ${key}`, "Content-Type: application/json"],
      chatBody,
    );
    expect(r.status).toBe(200);
    expect((JSON.parse(r.body) as { object: string }).object).toBe("chat.completion");
  });

  test("a #fragment in the request target is ignored for routing", async () => {
    const r = await rawRequest(gw.url, "GET /v1/models#frag HTTP/1.1", [
      "Host: gw",
      `Authorization: Bearer ${key}`,
    ]);
    expect(r.status).toBe(200);
    const probe = await rawRequest(gw.url, "GET /healthz#x HTTP/1.1", [`Host: 127.0.0.1:${port()}`]);
    expect(probe.status).toBe(200);
  });

  test("no Host header at all is routed too (HTTP/1.0)", async () => {
    const r = await rawExchange(gw.url, ["GET /healthz HTTP/1.0\r\n\r\n"]);
    expect(r.status).toBe(200);
  });
});

describe("JSON bodies", () => {
  const post = (body: string | Uint8Array) =>
    fetch(`${gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body,
    });

  test("a 100,000-deep metadata object is 400 naming the depth limit, and nothing is billed", async () => {
    const before = await balanceOf(gw, key);
    const deep = `${'{"a":'.repeat(100_000)}1${"}".repeat(100_000)}`;
    const r = await post(
      `{"model":"modelx-5.5","messages":[{"role":"user","content":"hi"}],"metadata":${deep}}`,
    );
    expect(r.status).toBe(400);
    expect(((await r.json()) as { error: { message: string } }).error.message).toContain("128 levels");
    expect(await balanceOf(gw, key)).toEqual(before);
  });

  test("invalid UTF-8 is 400, not billed", async () => {
    const before = await balanceOf(gw, key);
    const at = chatBody.indexOf("hi");
    // "\xC3\x28": a two-byte lead followed by an ASCII byte, inside the message text.
    const raw = Buffer.concat([
      Buffer.from(chatBody.slice(0, at)),
      Buffer.from([0xc3, 0x28]),
      Buffer.from(chatBody.slice(at)),
    ]);
    const r = await post(new Uint8Array(raw));
    expect(r.status).toBe(400);
    expect(((await r.json()) as { error: { message: string } }).error.message).toContain("UTF-8");
    expect(await balanceOf(gw, key)).toEqual(before);
  });

  test("a body nested exactly 128 deep is accepted", async () => {
    const deep = `${"[".repeat(126)}1${"]".repeat(126)}`;
    const r = await post(
      `{"model":"modelx-5.5","messages":[{"role":"user","content":"hi"}],"metadata":{"k":"v"},"x":${deep}}`,
    );
    expect(r.status).not.toBe(500);
    expect(r.status).not.toBe(400);
  });
});

describe("images", () => {
  const auth = () => ({ authorization: `Bearer ${key}` });

  test("20,000 emoji are a 20,000-character prompt (code points), 32,001 are refused as such", async () => {
    const generate = (prompt: string) =>
      fetch(`${gw.url}/v1/images/generations`, {
        method: "POST",
        headers: { ...auth(), "content-type": "application/json" },
        body: JSON.stringify({ model: "modelx-image-2", prompt, size: "64x64" }),
      });
    const ok = await generate("🦊".repeat(20_000));
    expect(ok.status).toBe(200);
    const long = await generate("🦊".repeat(32_001));
    expect(long.status).toBe(400);
    expect(((await long.json()) as { error: { message: string } }).error.message).toContain(
      "32001 characters",
    );
  });

  test("a truncated PNG as image or mask is 400 naming the part", async () => {
    const image = flatPng(64, 64);
    const mask = halfMask(64, 64);
    for (const [part, files] of [
      ["image", { image: image.subarray(0, image.length - 20) }],
      ["mask", { image, mask: mask.subarray(0, 60) }],
    ] as const) {
      const form = new FormData();
      form.append("model", "modelx-image-2");
      form.append("prompt", "give it a hat");
      for (const [name, bytes] of Object.entries(files)) form.append(name, new Blob([bytes]), `${name}.png`);
      const r = await fetch(`${gw.url}/v1/images/edits`, { method: "POST", headers: auth(), body: form });
      const body = (await r.json()) as { error: { param: string; message: string } };
      expect({ part, status: r.status, param: body.error.param }).toEqual({ part, status: 400, param: part });
      expect(body.error.message).toContain("truncated");
    }
  });
});

describe("multipart cut short (found by the multipart fuzz)", () => {
  test("a body ending inside the image part is 400 naming it, and the gateway keeps serving", async () => {
    const boundary = "cutboundary";
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\nmodelx-image-2\r\n--${boundary}\r\nContent-Disposition: form-data; name="prompt"\r\n\r\nhat\r\n--${boundary}\r\nContent-Disposition: form-data; name="image"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`;
    const body = Buffer.concat([Buffer.from(head), Buffer.from(flatPng(16, 16).subarray(0, 40))]);
    const r = await fetch(`${gw.url}/v1/images/edits`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${key}`,
        "content-type": `multipart/form-data; boundary=${boundary}`,
      },
      body,
    });
    expect(r.status).toBe(400);
    expect(((await r.json()) as { error: { param: string } }).error.param).toBe("image");
    expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
  });
});

describe("body read timeouts", () => {
  const head = (length: number | "chunked") =>
    [
      "POST /v1/chat/completions HTTP/1.1",
      `Host: 127.0.0.1`,
      `Authorization: Bearer ${key}`,
      "Content-Type: application/json",
      length === "chunked" ? "Transfer-Encoding: chunked" : `Content-Length: ${length}`,
      "",
      "",
    ].join("\r\n");

  test("a declared body that stops arriving is answered 408 (total deadline)", async () => {
    const r = await rawExchange(gw.url, [head(200), chatBody.slice(0, 10)], 15_000);
    expect(r.status).toBe(408);
    expect((JSON.parse(r.body) as { error: { code: string } }).error.code).toBe("request_timeout");
  }, 20_000);

  test("a large declared body that pauses longer than the idle limit is answered 408", async () => {
    const r = await rawExchange(gw.url, [head(200_000), chatBody.slice(0, 10)], 15_000);
    expect(r.status).toBe(408);
    expect(r.body).toContain("stalled");
  }, 20_000);

  test("a chunked body that pauses longer than the idle limit is answered 408", async () => {
    const r = await rawExchange(gw.url, [head("chunked"), '5\r\n{"mod\r\n']);
    expect(r.status).toBe(408);
    expect(r.body).toContain("stalled");
  }, 20_000);

  test("a chunked body trickling in under the idle limit still meets the total deadline", async () => {
    const parts: (string | number)[] = [head("chunked")];
    for (let i = 0; i < 12; i++) parts.push("1\r\n \r\n", 500);
    const r = await rawExchange(gw.url, parts);
    expect(r.status).toBe(408);
    expect(r.body).toContain("longer than 3 s");
  }, 20_000);

  test("a client that leaves mid-body is not logged as a handler failure", async () => {
    await rawExchange(gw.url, [head(500), chatBody.slice(0, 10), 100], 300).catch(() => undefined);
    await Bun.sleep(3500); // past the total body deadline, whichever way the read ends
    const errors = gw
      .logs()
      .split("\n")
      .filter((line) => line.includes('"level":"error"'));
    expect(errors).toEqual([]);
  });
});

describe("money amounts", () => {
  test("an admin credit past the largest exact amount is 400 naming it, not 500 (found by the config fuzz)", async () => {
    const token = adminTokenIn(gw.logs()) ?? "";
    const r = await fetch(`${gw.url}/admin/v1/accounts/default/credit`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ amount_usd: "9007200", note: "fuzz" }),
    });
    expect(r.status).toBe(400);
    expect(((await r.json()) as { error: { param: string } }).error.param).toBe("amount_usd");
  });
});
