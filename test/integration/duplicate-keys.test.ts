// A body that repeats a key (issue 25 item 5): the gateway admits the last value JSON.parse kept,
// so the upstream must receive exactly that, never the raw bytes where a first-wins parser would
// see another model or output cap than the one reserved for. Through the compiled binary, with a
// recording upstream that keeps the bytes it received.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type RunningGateway, startGateway } from "../helpers/gateway.ts";
import { type RecordingUpstream, startRecordingUpstream } from "../helpers/recording-upstream.ts";

let upstream: RecordingUpstream;
let gw: RunningGateway;

beforeAll(async () => {
  upstream = startRecordingUpstream(() =>
    Response.json({
      id: "chatcmpl-1",
      object: "chat.completion",
      created: 1,
      model: "up",
      choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
      usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
    }),
  );
  gw = await startGateway({
    config: `[[channels]]\nkind = "openai-chat"\nname = "up"\nbase_url = "${upstream.url}/v1"\nmodels = ["modelx-*"]\n`,
  });
});

afterAll(async () => {
  await gw.dispose();
  await upstream.stop();
});

/** The first value of `key` in JSON text, as a first-wins parser would read it. */
function firstValue(text: string, key: string): string | undefined {
  return new RegExp(`"${key}"\\s*:\\s*("[^"]*"|\\d+)`).exec(text)?.[1];
}

async function send(raw: string): Promise<string> {
  upstream.clear();
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${gw.key}`, "content-type": "application/json" },
    body: raw,
  });
  expect(res.status).toBe(200);
  await res.arrayBuffer();
  return new TextDecoder().decode(upstream.last().raw);
}

test("repeated model and max_tokens: the upstream receives the admitted values, each key once", async () => {
  const raw =
    '{"model":"modelx-5.5","max_tokens":100000,"messages":[{"role":"user","content":"hi"}],' +
    '"model" : "modelx-5.4-mini","max_tokens":5}';
  const forwarded = await send(raw);
  expect(firstValue(forwarded, "model")).toBe('"modelx-5.4-mini"');
  expect(firstValue(forwarded, "max_tokens")).toBe("5");
  expect(forwarded.match(/"model"/g)?.length).toBe(1);
  expect(forwarded.match(/"max_tokens"/g)?.length).toBe(1);
});

test("a key repeated inside a message: the admitted (last) content is forwarded", async () => {
  const long = "x ".repeat(2000);
  const raw = `{"model":"modelx-5.4-mini","messages":[{"role":"user","content":"${long}","content":"short"}]}`;
  const forwarded = await send(raw);
  expect(firstValue(forwarded, "content")).toBe('"short"');
  expect(forwarded).not.toContain("x x");
});

test("a body without repeated keys is forwarded byte for byte", async () => {
  const raw =
    '{ "model" : "modelx-5.4-mini",  "messages":[{"role":"user","content":"a \\"quoted\\": word"}] }';
  expect(await send(raw)).toBe(raw);
});
