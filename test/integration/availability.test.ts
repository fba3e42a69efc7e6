// Issue 25's availability defects against the compiled binary: no single request holds the event
// loop (a long unbroken prompt is counted off it, /healthz answers meanwhile; a deflated
// WebSocket frame is capped after inflating).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type RunningGateway, startGateway } from "../helpers/gateway.ts";
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
        messages: [{ role: "user", content: letters(1_000_000) }],
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
