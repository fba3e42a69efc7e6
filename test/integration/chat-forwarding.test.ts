// What a Chat request forwards to an openai-chat upstream, captured by a recording upstream
// (issue 17, defect 3 and the model name of 9): `n` bounded (422 beyond 8) and reserved for each
// choice, unknown fields forwarded as sent, cost-changing fields refused, the upstream's usage
// billed, and the answer naming the model the client asked for, not the upstream's mapped id.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { balanceOf, type RunningGateway, startGateway } from "../helpers/gateway.ts";
import { type RecordingUpstream, startRecordingUpstream } from "../helpers/recording-upstream.ts";

let upstream: RecordingUpstream;
let gw: RunningGateway;
let key: string;

/** A Chat Completions answer as OpenAI-compatible servers send it, naming the upstream's model. */
function chatAnswer(choices: number, completionTokens: number): Response {
  return Response.json({
    id: "chatcmpl-recorded",
    object: "chat.completion",
    created: 1_777_000_000,
    model: "llama3.2",
    choices: Array.from({ length: choices }, (_, index) => ({
      index,
      message: { role: "assistant", content: `answer ${index}` },
      finish_reason: "stop",
    })),
    usage: { prompt_tokens: 12, completion_tokens: completionTokens, total_tokens: 12 + completionTokens },
  });
}

beforeAll(async () => {
  upstream = startRecordingUpstream((request) => {
    const n = (request.json as { n?: number }).n ?? 1;
    return chatAnswer(n, 7 * n);
  });
  // 0.10 USD: one choice of 100,000 output tokens at 0.40 USD/M reserves 0.04 USD; three do not fit.
  gw = await startGateway({
    config: `[bootstrap]\nbalance_usd = "0.10"\n[[channels]]\nkind = "openai-chat"\nname = "recorded"\nbase_url = "${upstream.url}/v1"\nmodels = ["modelx-5.4-mini"]\nmodel_map = { "modelx-5.4-mini" = "llama3.2" }\n`,
  });
  key = gw.key ?? "";
}, 30_000);
afterAll(async () => {
  await gw.dispose();
  await upstream.stop();
}, 30_000);

const chat = (extra: Record<string, unknown>) =>
  fetch(`${gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "modelx-5.4-mini", messages: [{ role: "user", content: "hi" }], ...extra }),
  });

interface ErrorBody {
  error: { param: string | null; code: string | null; message: string };
}

describe("Chat n and forwarding", () => {
  test("n: 1000 is 422 naming n, and nothing reaches the upstream", async () => {
    upstream.clear();
    const r = await chat({ n: 1000 });
    expect(r.status).toBe(422);
    const body = (await r.json()) as ErrorBody;
    expect(body.error.param).toBe("n");
    expect(body.error.message).toContain("at most 8");
    expect(upstream.requests).toHaveLength(0);
  });

  test("the reservation multiplies by n: one choice fits the balance, three do not", async () => {
    upstream.clear();
    const one = await chat({ max_tokens: 100_000 });
    expect(one.status).toBe(200);
    const three = await chat({ max_tokens: 100_000, n: 3 });
    expect(three.status).toBe(429);
    expect(((await three.json()) as ErrorBody).error.code).toBe("insufficient_quota");
    expect(upstream.requests).toHaveLength(1);
  });

  test("n choices are forwarded with unknown fields as sent, billed as the upstream reports", async () => {
    upstream.clear();
    const before = await balanceOf(gw, key);
    const r = await chat({ n: 3, max_tokens: 50, seed: 7, logprobs: true, x_vendor_flag: { a: 1 } });
    expect(r.status).toBe(200);
    const answer = (await r.json()) as { model: string; choices: unknown[] };
    expect(answer.choices).toHaveLength(3);
    expect(answer.model).toBe("modelx-5.4-mini");
    const sent = upstream.last().json as Record<string, unknown>;
    expect(sent).toMatchObject({ model: "llama3.2", n: 3, seed: 7, logprobs: true, x_vendor_flag: { a: 1 } });
    const after = await balanceOf(gw, key);
    // 12 input tokens at 0.10 USD/M and 21 output tokens at 0.40 USD/M.
    expect(Number(before.balance_nanos) - Number(after.balance_nanos)).toBe(12 * 100 + 21 * 400);
  });

  test("fields billed at rates the gateway does not price are refused, naming the field", async () => {
    upstream.clear();
    for (const [extra, param] of [
      [{ service_tier: "priority" }, "service_tier"],
      [{ modalities: ["text", "audio"] }, "modalities"],
      [{ audio: { voice: "alloy", format: "wav" } }, "audio"],
    ] as const) {
      const r = await chat(extra);
      expect({ param, status: r.status }).toEqual({ param, status: 400 });
      expect(((await r.json()) as ErrorBody).error.param).toBe(param);
    }
    expect((await chat({ service_tier: "auto" })).status).toBe(200);
    expect(upstream.requests).toHaveLength(1);
  });
});
