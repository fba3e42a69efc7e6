// The request rules of the text endpoints through the compiled gateway: misplaced reasoning
// fields, sampling ranges (422), the Messages version header and auth forms, 413 on over-long
// input, unknown models and image models on text endpoints, malformed JSON; and that streams are not buffered.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type RunningGateway, startGateway } from "../helpers/gateway.ts";
import { readSse } from "../helpers/sse.ts";
import { post } from "./text-setup.ts";

let gw: RunningGateway;
beforeAll(async () => {
  // A slow in-process simulator (first token after 300 ms, then 20 tokens/s) and quick keep-alives.
  gw = await startGateway({ config: "[text]\nsim_ttft_ms = 0\nkeepalive_seconds = 0.1\n" });
}, 30_000);
afterAll(async () => {
  await gw?.dispose();
}, 30_000);

type Body = { error: { message: string; code: string | null; param: string | null; type: string } };
type AnthropicBody = { type: string; error: { type: string; message: string } };

describe("seed rules", () => {
  test("top-level reasoning_effort on /v1/responses → 400 upstream_error naming reasoning.effort", async () => {
    const r = await post(gw, "/v1/responses", { model: "modelx-5.5", input: "hi", reasoning_effort: "high" });
    expect(r.status).toBe(400);
    const body = (await r.json()) as Body;
    expect(body.error.code).toBe("upstream_error");
    expect(body.error.message).toContain('"reasoning": {"effort"');
  });

  test("nested reasoning on /v1/chat/completions → 400 upstream_error naming reasoning_effort", async () => {
    const r = await post(gw, "/v1/chat/completions", {
      model: "modelx-5.5",
      messages: [{ role: "user", content: "hi" }],
      reasoning: { effort: "high" },
    });
    expect(r.status).toBe(400);
    const body = (await r.json()) as Body;
    expect(body.error.code).toBe("upstream_error");
    expect(body.error.message).toContain("reasoning_effort");
  });

  test.each([
    ["/v1/responses", { model: "modelx-5.5", input: "hi", temperature: 3 }, "temperature"],
    [
      "/v1/chat/completions",
      { model: "modelx-5.5", messages: [{ role: "user", content: "hi" }], temperature: 3 },
      "temperature",
    ],
    ["/v1/responses", { model: "modelx-5.5", input: "hi", top_p: 1.5 }, "top_p"],
  ])("%s out-of-range value → 422 naming %#", async (path, body, field) => {
    const r = await post(gw, path, body);
    expect(r.status).toBe(422);
    const parsed = (await r.json()) as Body;
    expect(parsed.error.param).toBe(field);
    expect(parsed.error.message).toContain(`${field} must be between`);
  });

  test("temperature 3 on /v1/messages → 422 in the Anthropic shape", async () => {
    const r = await post(gw, "/v1/messages", {
      model: "modelz-haiku-4-5-20251001",
      max_tokens: 10,
      temperature: 3,
      messages: [{ role: "user", content: "hi" }],
    });
    expect(r.status).toBe(422);
    const body = (await r.json()) as AnthropicBody;
    expect(body.type).toBe("error");
    expect(body.error.message).toContain("temperature must be between 0 and 2, got 3");
  });

  test("missing or malformed version header on /v1/messages → 400; both header names and auth forms work", async () => {
    const body = {
      model: "modelz-haiku-4-5-20251001",
      max_tokens: 20,
      messages: [{ role: "user", content: "hi" }],
    };
    const url = `${gw.url}/v1/messages`;
    const key = gw.key ?? "";
    const send = (headers: Record<string, string>) =>
      fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify(body),
      });
    const missing = await send({ "x-api-key": key });
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as AnthropicBody).error.message).toContain("modelz-version");
    expect((await send({ "x-api-key": key, "anthropic-version": "yesterday" })).status).toBe(400);
    expect((await send({ "x-api-key": key, "modelz-version": "2023-06-01" })).status).toBe(200);
    expect((await send({ authorization: `Bearer ${key}`, "anthropic-version": "2026-10-21" })).status).toBe(
      200,
    );
  });

  test("an input longer than the model's context → 413", async () => {
    // modelx-5.3-c-spark has a 128k-token context; ~200k tokens of digits and spaces exceed it.
    const input = "7 ".repeat(200_000);
    const r = await post(gw, "/v1/responses", { model: "modelx-5.3-c-spark", input });
    expect(r.status).toBe(413);
    expect(((await r.json()) as Body).error.message).toContain("128000-token context");
  });

  test("unknown model → 400 model not found; any text model is served on every text endpoint", async () => {
    const unknown = await post(gw, "/v1/responses", { model: "modelx-4", input: "hi" });
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as Body).error.code).toBe("model_not_found");
    const crossed = await post(gw, "/v1/chat/completions", {
      model: "modelz-opus-4-7",
      messages: [{ role: "user", content: "hi" }],
    });
    expect(crossed.status).toBe(200);
    const image = await post(gw, "/v1/responses", { model: "modelx-image-2", input: "hi" });
    expect(image.status).toBe(400);
    expect(((await image.json()) as Body).error.message).toContain("/v1/images/generations");
  });

  test("malformed JSON and missing fields → 400 naming the problem", async () => {
    const bad = await post(gw, "/v1/chat/completions", "{not json");
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as Body).error.message).toContain("not valid JSON");
    const missing = await post(gw, "/v1/messages", { model: "modelz-opus-4-7", messages: [] });
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as AnthropicBody).error.message).toContain("max_tokens");
  });

  test("thinking budget below 1024 → 400 naming thinking.budget_tokens", async () => {
    const r = await post(gw, "/v1/messages", {
      model: "modelz-opus-4-7",
      max_tokens: 2000,
      thinking: { type: "enabled", budget_tokens: 100 },
      messages: [{ role: "user", content: "hi" }],
    });
    expect(r.status).toBe(400);
    expect(((await r.json()) as AnthropicBody).error.message).toContain("thinking.budget_tokens");
  });

  test("max tokens honoured: Responses incomplete, Chat length, Messages max_tokens", async () => {
    const resp = (await (
      await post(gw, "/v1/responses", { model: "modelx-5.5", input: "hi", max_output_tokens: 5 })
    ).json()) as {
      status: string;
      incomplete_details: { reason: string };
      usage: { output_tokens: number };
    };
    expect(resp.status).toBe("incomplete");
    expect(resp.incomplete_details.reason).toBe("max_output_tokens");
    expect(resp.usage.output_tokens).toBe(5);
    const chat = (await (
      await post(gw, "/v1/chat/completions", {
        model: "modelx-5.5",
        max_tokens: 5,
        messages: [{ role: "user", content: "hi" }],
      })
    ).json()) as { choices: { finish_reason: string }[] };
    expect(chat.choices[0]?.finish_reason).toBe("length");
    const msg = (await (
      await post(gw, "/v1/messages", {
        model: "modelz-opus-4-7",
        max_tokens: 5,
        messages: [{ role: "user", content: "hi" }],
      })
    ).json()) as { stop_reason: string; usage: { output_tokens: number } };
    expect(msg.stop_reason).toBe("max_tokens");
    expect(msg.usage.output_tokens).toBe(5);
  });

  test("count_tokens answers the input token count the generation reports", async () => {
    const body = {
      model: "modelz-opus-4-7",
      system: "Be brief.",
      messages: [{ role: "user", content: "Count these words." }],
    };
    const counted = (await (await post(gw, "/v1/messages/count_tokens", body)).json()) as {
      input_tokens: number;
    };
    const made = (await (await post(gw, "/v1/messages", { ...body, max_tokens: 50 })).json()) as {
      usage: { input_tokens: number };
    };
    expect(counted.input_tokens).toBeGreaterThan(3);
    expect(made.usage.input_tokens).toBe(counted.input_tokens);
  });
});

describe("streaming is not buffered", () => {
  test("the first delta arrives long before the slow upstream finishes, with keep-alives while it is silent", async () => {
    // sim:ttft / sim:tps slow the simulator down: ~300 ms of silence, then 10 tokens per second.
    const sent = performance.now();
    const r = await post(gw, "/v1/chat/completions", {
      model: "modelx-5.5",
      max_tokens: 12,
      stream: true,
      messages: [{ role: "user", content: "Slowly sim:ttft=300 sim:tps=10" }],
    });
    const { events, comments } = await readSse(r, sent);
    const deltas = events.filter((e) => e.data.includes('"content":"') && !e.data.includes('"content":""'));
    expect(deltas.length).toBe(12);
    const first = deltas[0]?.at ?? 0;
    const last = events.at(-1)?.at ?? 0;
    // 11 more tokens at 10/s take ~1.1 s after the first one: the first must not wait for them.
    expect(last - first).toBeGreaterThan(800);
    expect(comments).toBeGreaterThan(0);
  });
});
