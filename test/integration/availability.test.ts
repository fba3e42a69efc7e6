// Issue 25's availability defects against the compiled binary: no single request holds the event
// loop (a long unbroken prompt is counted off it, /healthz answers meanwhile; a deflated
// WebSocket frame is capped after inflating; the simulator decodes and paints images in a thread
// of its own, within a pixel budget), and a body over the cap is refused by its declared length
// before it is read, or at the cap while it streams, the connection then closed.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import { brotliCompressSync, deflateSync, gzipSync, zstdCompressSync } from "node:zlib";
import { PNG } from "pngjs";
import { type RunningGateway, startGateway } from "../helpers/gateway.ts";
import { hostPort, rawExchange, rawResponses } from "../helpers/raw-http.ts";
import { openRawSocket } from "../helpers/raw-ws.ts";

const BODY_CAP = 2 * 1024 * 1024;

let gw: RunningGateway;
let key: string;

beforeAll(async () => {
  gw = await startGateway({ config: `[text]\nmax_body_bytes = ${BODY_CAP}\n` });
  key = gw.key ?? "";
}, 30_000);
afterAll(async () => {
  await gw.dispose();
}, 30_000);

const letters = (n: number): string => "a".repeat(n);

/**
 * `n` letters in one unbroken piece that does not repeat (runs of `a` of seeded lengths, each ended
 * by `b`): the tokenizer merges every chunk of it, where a run of one letter is one chunk repeated.
 */
function unrepeatedLetters(n: number): string {
  let seed = 25;
  let text = "";
  while (text.length < n) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    text += `${"a".repeat(1 + (seed >>> 28))}b`;
  }
  return text.slice(0, n);
}

/** Resolves with the order in which the promises settled, by label. */
function settleOrder(entries: [string, Promise<unknown>][]): Promise<string[]> {
  const order: string[] = [];
  return Promise.all(entries.map(([label, p]) => p.finally(() => order.push(label)))).then(() => order);
}

describe("one long unbroken prompt does not stall the gateway (issue 25 item 7)", () => {
  test("/healthz answers while a 1,000,000-letter prompt is counted, before the count answers", async () => {
    const counted = fetch(`${gw.url}/v1/messages/count_tokens`, {
      method: "POST",
      headers: { "x-api-key": key, "anthropic-version": "2023-06-01", "content-type": "application/json" },
      body: JSON.stringify({
        model: "modelx-5.5",
        messages: [{ role: "user", content: unrepeatedLetters(1_000_000) }],
      }),
    }).then(async (r) => ({ status: r.status, json: (await r.json()) as { input_tokens?: number } }));
    // Before the fix the count held the event loop for hours: /healthz waited behind it.
    const health = (async () => {
      for (let i = 0; i < 3; i++) expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
    })();
    const order = await settleOrder([
      ["count", counted],
      ["healthz", health],
    ]);
    expect(order).toEqual(["healthz", "count"]);
    const { status, json } = await counted;
    expect(status).toBe(200);
    expect(json.input_tokens).toBeGreaterThan(1_000_000 / 128);
    expect(json.input_tokens).toBeLessThan(1_000_000 / 2);
  }, 20_000);

  test("the token thread counts at a lower priority than the event loop (Linux: nice +10)", async () => {
    if (process.platform !== "linux") return;
    const r = await fetch(`${gw.url}/v1/messages/count_tokens`, {
      method: "POST",
      headers: { "x-api-key": key, "anthropic-version": "2023-06-01", "content-type": "application/json" },
      body: JSON.stringify({ model: "modelx-5.5", messages: [{ role: "user", content: letters(50_000) }] }),
    });
    expect(r.status).toBe(200);
    // The nice value of each of the gateway's threads (field 19 of /proc/PID/task/TID/stat).
    const nice = (tid: string): number => {
      const stat = readFileSync(`/proc/${gw.proc.pid}/task/${tid}/stat`, "utf8");
      return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]);
    };
    const main = nice(String(gw.proc.pid));
    const others = readdirSync(`/proc/${gw.proc.pid}/task`)
      .filter((tid) => tid !== String(gw.proc.pid))
      .map(nice);
    // Before, every thread ran at the process's priority: a hostile count took CPU from requests.
    expect(main).toBe(os.getPriority());
    expect(others).toContain(Math.min(19, main + 10));
  });

  test("a prompt past the model's context is 413 naming the field, counted only up to the context", async () => {
    // ~400,000 tokens against modelx-5.3-c-spark's 128,000: counting stops at the context.
    const r = await fetch(`${gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({
        model: "modelx-5.3-c-spark",
        messages: [{ role: "user", content: unrepeatedLetters(1_500_000) }],
      }),
    });
    expect(r.status).toBe(413);
    const { error } = (await r.json()) as { error: { message: string; param: string | null } };
    expect(error.param).toBe("messages");
    expect(error.message).toContain("more than the 128000-token context of `modelx-5.3-c-spark`");
  });

  test("a chat of 200,000 letters is answered and billed on its count", async () => {
    const r = await fetch(`${gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({
        model: "modelx-5.5",
        max_tokens: 20,
        messages: [{ role: "user", content: letters(200_000) }],
      }),
    });
    expect(r.status).toBe(200);
    const json = (await r.json()) as { usage: { prompt_tokens: number } };
    expect(json.usage.prompt_tokens).toBeGreaterThan(200_000 / 128);
  }, 20_000);
});

describe("a Responses WebSocket message is capped after inflating (issue 25 item 7)", () => {
  const open = () =>
    openRawSocket(gw.url, "/v1/responses", [
      `Authorization: Bearer ${key}`,
      "OpenAI-Beta: responses_websockets=2026-02-06",
    ]);
  const create = (text: string) =>
    JSON.stringify({
      type: "response.create",
      model: "modelx-5.5",
      max_output_tokens: 16,
      input: [{ role: "user", content: text }],
    });

  test("a deflated frame over [text] max_body_bytes once inflated closes the socket with 1009", async () => {
    const socket = await open();
    expect(socket.handshake).toMatch(/^HTTP\/1\.1 101/);
    expect(socket.handshake.toLowerCase()).toContain("permessage-deflate");
    // ~3 KB on the wire, 1.5 times the cap inflated.
    socket.sendText(create(letters(BODY_CAP * 1.5)), true);
    expect(await socket.closed).toBe(1009);
  }, 20_000);

  test("a deflated frame under the cap is answered", async () => {
    const socket = await open();
    socket.sendText(create(letters(BODY_CAP / 4)), true);
    const done = async (): Promise<boolean> => socket.texts.some((t) => t.includes('"response.completed"'));
    while (!(await done())) await Bun.sleep(20);
    socket.destroy();
  }, 20_000);
});

/** A flat PNG of `side` × `side` pixels (pngjs; fast to write, as slow to decode as any). */
function squarePng(side: number): Uint8Array {
  const png = new PNG({ width: side, height: side });
  png.data.fill(200);
  return new Uint8Array(PNG.sync.write(png, { colorType: 6 }));
}

function editForm(files: Record<string, Uint8Array>): FormData {
  const form = new FormData();
  form.append("model", "modelx-image-2");
  form.append("prompt", "give it a hat");
  for (const [name, bytes] of Object.entries(files)) form.append(name, new Blob([bytes]), `${name}.png`);
  return form;
}

describe("the simulator's image work is off the event loop, within a pixel budget (issue 25 item 8)", () => {
  const edit = (files: Record<string, Uint8Array>) =>
    fetch(`${gw.url}/v1/images/edits`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}` },
      body: editForm(files),
    });

  test("20 /healthz in a row answer while a 2048x2048 edit is decoded and painted", async () => {
    const edited = edit({ image: squarePng(2048) });
    // Before the fix each /healthz waited for a decode or an encode of the edit (a second or so each).
    const health = (async () => {
      for (let i = 0; i < 20; i++) expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
    })();
    expect(
      await settleOrder([
        ["edit", edited],
        ["healthz", health],
      ]),
    ).toEqual(["healthz", "edit"]);
    const r = await edited;
    expect(r.status).toBe(200);
    expect(((await r.json()) as { data: unknown[] }).data).toHaveLength(1);
  }, 60_000);

  test("a 4096x4096 image, or an image and mask over the budget together, is 400 naming the field", async () => {
    const big = await edit({ image: squarePng(4096) });
    expect(big.status).toBe(400);
    expect(((await big.json()) as { error: { message: string } }).error.message).toStartWith("image:");
    const side = 2100;
    const both = await edit({ image: squarePng(side), mask: squarePng(side) });
    expect(both.status).toBe(400);
    const { error } = (await both.json()) as { error: { message: string } };
    expect(error.message).toStartWith("mask:");
    expect(error.message).toContain("budget");
  }, 60_000);
});

describe("bodies over the cap (issue 25 item 8)", () => {
  const head = (length: string) =>
    [
      "POST /v1/chat/completions HTTP/1.1",
      "Host: 127.0.0.1",
      `Authorization: Bearer ${key}`,
      "Content-Type: application/json",
      length,
      "",
      "",
    ].join("\r\n");

  test("a declared Content-Length over the cap is 413 before any body byte is sent, and the connection closes", async () => {
    // Waits for a second answer that never comes: resolves when the gateway closes the connection.
    const { responses, closed } = await rawResponses(gw.url, [head(`Content-Length: ${BODY_CAP + 1}`)], 2);
    expect(responses.map((r) => r.status)).toEqual([413]);
    expect(responses[0]?.headers.connection).toBe("close");
    expect(closed).toBe(true);
  });

  test("a chunked body streaming past the cap is 413 and the gateway stops reading it", async () => {
    const { host, port } = hostPort(gw.url);
    const socket = net.connect(port, host);
    const chunk = `${(64 * 1024).toString(16)}\r\n${"a".repeat(64 * 1024)}\r\n`;
    let answer = "";
    let ended = false;
    socket.on("data", (data: Buffer) => {
      answer += data.toString("latin1");
    });
    socket.on("error", () => undefined);
    socket.on("close", () => {
      ended = true;
    });
    await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
    socket.write(`${head("Transfer-Encoding: chunked")}`);
    // Up to 40 times the cap: the server must answer and close long before.
    let sent = 0;
    while (!ended && sent < 40 * BODY_CAP) {
      if (!socket.write(chunk))
        await new Promise<void>((resolve) => socket.once("drain", resolve).once("close", resolve));
      sent += 64 * 1024;
    }
    while (!ended) await new Promise<void>((resolve) => socket.once("close", () => resolve()));
    // The gateway closes with the rest of the body unread; the peer's reset can discard an answer
    // already on its way (TCP), so the answer is checked when it arrived. What must hold either way:
    // the gateway stopped reading long before 40 times the cap.
    if (answer !== "") expect(answer).toMatch(/^HTTP\/1\.1 413/);
    expect(sent).toBeLessThan(40 * BODY_CAP);
    expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
  }, 30_000);
});

describe("compressed request bodies (issue 25 item 9)", () => {
  const chat = JSON.stringify({
    model: "modelx-5.5",
    max_tokens: 8,
    messages: [{ role: "user", content: "hi" }],
  });
  const post = (path: string, headers: string[], body: Uint8Array) =>
    rawExchange(gw.url, [
      `${[`POST ${path} HTTP/1.1`, "Host: 127.0.0.1", `Authorization: Bearer ${key}`, ...headers, `Content-Length: ${body.byteLength}`, "Connection: close", "", ""].join("\r\n")}`,
      body,
    ]);
  const json = ["Content-Type: application/json"];

  test("gzip, deflate, br and zstd bodies are decoded and answered", async () => {
    const encoders: [string, (b: Buffer) => Uint8Array][] = [
      ["gzip", (b) => gzipSync(b)],
      ["deflate", (b) => deflateSync(b)],
      ["br", (b) => brotliCompressSync(b)],
      ["zstd", (b) => zstdCompressSync(b)],
      ["gzip, identity", (b) => gzipSync(b)],
    ];
    for (const [coding, encode] of encoders) {
      const r = await post(
        "/v1/chat/completions",
        [...json, `Content-Encoding: ${coding}`],
        encode(Buffer.from(chat)),
      );
      expect({ coding, status: r.status }).toEqual({ coding, status: 200 });
      expect((JSON.parse(r.body) as { object: string }).object).toBe("chat.completion");
    }
  });

  test("a gzip bomb is 413 once its decoded size passes the cap", async () => {
    const bomb = gzipSync(Buffer.alloc(BODY_CAP * 16, 0x61));
    expect(bomb.byteLength).toBeLessThan(BODY_CAP / 16);
    const r = await post("/v1/chat/completions", [...json, "Content-Encoding: gzip"], bomb);
    expect(r.status).toBe(413);
    expect((JSON.parse(r.body) as { error: { message: string } }).error.message).toContain(
      "once decompressed",
    );
  });

  test("a gzip bomb whose trailer declares more than the cap is 413 before it is inflated", async () => {
    const bomb = gzipSync(Buffer.alloc(BODY_CAP * 16, 0x61));
    const r = await post("/v1/chat/completions", [...json, "Content-Encoding: gzip"], bomb);
    expect(r.status).toBe(413);
    const { message } = (JSON.parse(r.body) as { error: { message: string } }).error;
    // Before, it was inflated up to the cap first (the message had no trailer to quote).
    expect(message).toContain(`its trailer gives ${BODY_CAP * 16} bytes`);
  });

  test("a gzip bomb with a forged trailer is still 413 once its decoded size passes the cap", async () => {
    const bomb = gzipSync(Buffer.alloc(BODY_CAP * 16, 0x61));
    bomb.writeUInt32LE(100, bomb.byteLength - 4); // claims 100 bytes
    const r = await post("/v1/chat/completions", [...json, "Content-Encoding: gzip"], bomb);
    expect(r.status).toBe(413);
    const { message } = (JSON.parse(r.body) as { error: { message: string } }).error;
    expect(message).toContain("once decompressed");
    expect(message).not.toContain("trailer");
  });

  test("an unknown coding is 415 naming the header; bytes that are not gzip are 400 naming it", async () => {
    const unknown = await post(
      "/v1/chat/completions",
      [...json, "Content-Encoding: compress"],
      Buffer.from(chat),
    );
    expect(unknown.status).toBe(415);
    expect((JSON.parse(unknown.body) as { error: { param: string } }).error.param).toBe("Content-Encoding");
    const broken = await post("/v1/chat/completions", [...json, "Content-Encoding: gzip"], Buffer.from(chat));
    expect(broken.status).toBe(400);
    expect((JSON.parse(broken.body) as { error: { param: string } }).error.param).toBe("Content-Encoding");
  });

  test("a compressed multipart upload is 415 naming the header", async () => {
    const r = await post(
      "/v1/images/edits",
      ["Content-Type: multipart/form-data; boundary=x", "Content-Encoding: gzip"],
      gzipSync(Buffer.from("--x--\r\n")),
    );
    expect(r.status).toBe(415);
    expect((JSON.parse(r.body) as { error: { param: string } }).error.param).toBe("Content-Encoding");
  });

  // Bun.serve's HTTP parser answers 400 to a trailer section and closes the connection before the
  // handler sees the request (oven-sh/bun#32887 consumes it instead); the gateway cannot reach it.
  test.todo("a chunked body with a valid trailer section is answered");
});
