// The rate-limit headers as the official SDKs read them. Every answer carries its protocol's form
// (OpenAI's x-ratelimit-* on /v1/chat/completions and /v1/responses, Anthropic's
// anthropic-ratelimit-* on /v1/messages), every 429 carries retry-after and retry-after-ms, and
// the `openai` and `@anthropic-ai/sdk` clients back off by them: a key allowed one request in
// flight is refused while another holds the slot, and the SDK's retry comes no sooner than the
// 429 said (its own default back-off would retry within 0.5 s).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { chatAnswer } from "../helpers/chat-rig.ts";
import { createKey, type RunningGateway, startGateway } from "../helpers/gateway.ts";
import { type RecordingUpstream, startRecordingUpstream } from "../helpers/recording-upstream.ts";
import { keyAccepted, waitFor } from "../helpers/wait.ts";

let gw: RunningGateway;
let upstream: RecordingUpstream;
let secret: string;
/** Held answers: each upstream request waits until the test lets it go. */
let hold: Promise<void> = Promise.resolve();
let letGo: () => void = () => undefined;

function holdNext(): void {
  hold = new Promise<void>((resolve) => {
    letGo = resolve;
  });
}

beforeAll(async () => {
  upstream = startRecordingUpstream(async (request) => {
    await hold;
    const model = (request.json as { model: string }).model;
    return chatAnswer(model, "hello", { prompt_tokens: 5, completion_tokens: 2 });
  });
  gw = await startGateway({
    config: `[[channels]]\nkind = "openai-chat"\nname = "held"\nbase_url = "${upstream.url}/v1"\nmodels = ["*"]\n`,
  });
  secret = (
    await createKey(gw, [
      "--account",
      "default",
      "--name",
      "one-at-a-time",
      "--concurrency",
      "1",
      "--rpm",
      "600",
    ])
  ).secret;
  await keyAccepted(gw.url, secret);
}, 60_000);

afterAll(async () => {
  letGo();
  await gw?.dispose();
  await upstream?.stop();
}, 30_000);

interface Attempt {
  at: number;
  status: number;
  headers: Headers;
}

/** A fetch for an SDK that records each attempt and lets the held request go at the first 429. */
function recordingFetch(attempts: Attempt[]): typeof fetch {
  const recorded = async (input: string | URL | Request, init?: RequestInit) => {
    const at = performance.now();
    const response = await fetch(input, init);
    attempts.push({ at, status: response.status, headers: response.headers });
    if (response.status === 429) letGo();
    return response;
  };
  return recorded as typeof fetch;
}

/** Starts a request that holds the key's one slot until the first 429 lets it go. */
async function holdTheSlot(path: string, body: unknown): Promise<{ held: Promise<Response> }> {
  holdNext();
  const before = upstream.requests.length;
  const held = fetch(`${gw.url}${path}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${secret}`,
      "anthropic-version": "2023-06-01",
    },
    body: JSON.stringify(body),
  });
  let early: Response | undefined;
  held.then((r) => {
    early = r;
  });
  await waitFor("the held request upstream", async () => {
    if (early !== undefined)
      throw new Error(`the held request was answered ${early.status}: ${await early.text()}`);
    return upstream.requests.length > before;
  });
  // Wrapped: an async function returning the promise itself would wait for it.
  return { held };
}

/** The 429 then the success, the retry no sooner than the 429's retry-after-ms. */
function expectBackedOff(attempts: Attempt[]): Attempt {
  expect(attempts.map((a) => a.status)).toEqual([429, 200]);
  const [refused, retried] = attempts as [Attempt, Attempt];
  const waitMs = Number(refused.headers.get("retry-after-ms"));
  expect(waitMs).toBeGreaterThanOrEqual(1000);
  expect(Number(refused.headers.get("retry-after"))).toBe(Math.ceil(waitMs / 1000));
  // The SDK slept what the gateway said (its default would have been at most 500 ms).
  expect(retried.at - refused.at).toBeGreaterThanOrEqual(waitMs - 5);
  return refused;
}

describe("the official SDKs back off by the 429's retry headers", () => {
  test("openai: Chat Completions; the answers carry OpenAI's request headers", async () => {
    const { held } = await holdTheSlot("/v1/chat/completions", {
      model: "modelx-5.4",
      messages: [{ role: "user", content: "hold" }],
    });
    const attempts: Attempt[] = [];
    const client = new OpenAI({
      apiKey: secret,
      baseURL: `${gw.url}/v1`,
      maxRetries: 2,
      fetch: recordingFetch(attempts),
    });
    const { data, response } = await client.chat.completions
      .create({ model: "modelx-5.4", messages: [{ role: "user", content: "Say hi." }] })
      .withResponse();
    expect(data.choices[0]?.message.content).toBe("hello");
    expect((await held).status).toBe(200);
    const refused = expectBackedOff(attempts);
    for (const headers of [refused.headers, response.headers]) {
      expect(headers.get("x-ratelimit-limit-requests")).toBe("600");
      expect(headers.get("x-ratelimit-remaining-requests")).toMatch(/^\d+$/);
      expect(headers.get("x-ratelimit-reset-requests")).toMatch(/^(\d+ms|[\d.]+s|\d+m[\d.]+s)$/);
      expect(headers.get("anthropic-ratelimit-requests-limit")).toBeNull();
      // No tokens-per-minute limit is configured: no token headers.
      expect(headers.get("x-ratelimit-limit-tokens")).toBeNull();
    }
  }, 20_000);

  test("@anthropic-ai/sdk: Messages; the answers carry Anthropic's request headers", async () => {
    const { held } = await holdTheSlot("/v1/messages", {
      model: "modelz-sonnet-4-6",
      max_tokens: 50,
      messages: [{ role: "user", content: "hold" }],
    });
    const attempts: Attempt[] = [];
    const client = new Anthropic({
      apiKey: secret,
      baseURL: gw.url,
      maxRetries: 2,
      fetch: recordingFetch(attempts),
    });
    const { data, response } = await client.messages
      .create({
        model: "modelz-sonnet-4-6",
        max_tokens: 50,
        messages: [{ role: "user", content: "Say hi." }],
      })
      .withResponse();
    expect(data.content[0]?.type).toBe("text");
    expect((await held).status).toBe(200);
    const refused = expectBackedOff(attempts);
    for (const headers of [refused.headers, response.headers]) {
      expect(headers.get("anthropic-ratelimit-requests-limit")).toBe("600");
      expect(headers.get("anthropic-ratelimit-requests-remaining")).toMatch(/^\d+$/);
      const reset = headers.get("anthropic-ratelimit-requests-reset") ?? "";
      expect(reset).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      expect(Number.isNaN(Date.parse(reset))).toBe(false);
      expect(headers.get("x-ratelimit-limit-requests")).toBeNull();
      expect(headers.get("anthropic-ratelimit-tokens-limit")).toBeNull();
    }
  }, 20_000);
});

describe("retry-after on every 429", () => {
  test("an upstream's 429 without its own Retry-After still tells the client when to retry", async () => {
    upstream.answer(() =>
      Response.json({ error: { message: "slow down", type: "rate_limit" } }, { status: 429 }),
    );
    try {
      const response = await fetch(`${gw.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${gw.key ?? ""}` },
        body: JSON.stringify({ model: "modelx-5.4", messages: [{ role: "user", content: "Hi" }] }),
      });
      expect(response.status).toBe(429);
      expect(response.headers.get("retry-after")).toBe("1");
      expect(response.headers.get("retry-after-ms")).toBe("1000");
    } finally {
      upstream.answer(async (request) => {
        await hold;
        const model = (request.json as { model: string }).model;
        return chatAnswer(model, "hello", { prompt_tokens: 5, completion_tokens: 2 });
      });
    }
  });
});
