// The reservation is an upper bound of what the upstream bills, for every input kind (issue 25
// item 2), through the compiled binary against recording upstreams that report usage as the real
// provider would (test/helpers/provider-billing.ts): images (inline of any size, by URL), many
// messages, names, tool definitions, in each client protocol, served natively and translated.
// The regression: an account with $0.0001 and 20 parallel chats of 50 image parts each was
// admitted 15 times and ended at −$0.057; now the balance never goes below zero and the excess is
// refused with 429 insufficient_quota. What has no bound of its own (files, stored conversations)
// is reserved at the model's context window; what has none at all (audio, MCP) is refused with 400.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { type RunningGateway, startGateway } from "../helpers/gateway.ts";
import {
  anthropicInput,
  openaiChatInput,
  openaiResponsesInput,
  pngDataUrl,
} from "../helpers/provider-billing.ts";
import {
  type RecordedRequest,
  type RecordingUpstream,
  startRecordingUpstream,
} from "../helpers/recording-upstream.ts";

const CHAT_MODEL = "modelx-5.4-mini"; // openai-chat channel
const RESPONSES_MODEL = "modelx-5.4"; // openai-responses channel
const MESSAGES_MODEL = "modelz-haiku-4-5-20251001"; // anthropic channel

type Obj = Record<string, unknown>;

let upstream: RecordingUpstream;
let gw: RunningGateway;
/** The key of the request in flight, so the upstream can read its reservation. */
let currentKey = "";
/** Reservations the upstream saw, in order (account's reserved_nanos while the request was in it). */
const seenReserved: number[] = [];

async function balance(secret: string): Promise<{ balance: number; reserved: number }> {
  const res = await fetch(`${gw.url}/v1/dashboard/billing/balance`, {
    headers: { authorization: `Bearer ${secret}` },
  });
  if (res.status !== 200) throw new Error(`balance answered ${res.status}`);
  const body = (await res.json()) as { balance_nanos: number; reserved_nanos: number };
  return { balance: Number(body.balance_nanos), reserved: Number(body.reserved_nanos) };
}

const outputCap = (body: Obj): number =>
  Number(body.max_completion_tokens ?? body.max_tokens ?? body.max_output_tokens ?? 16);

/** Answers as the provider would: input by its billing rules, output at the request's cap. */
async function answer(request: RecordedRequest): Promise<Response> {
  const body = request.json as Obj;
  if (currentKey !== "") seenReserved.push((await balance(currentKey)).reserved);
  const output = outputCap(body);
  if (request.path.endsWith("/chat/completions")) {
    const input = openaiChatInput(body);
    return Response.json({
      id: "chatcmpl-1",
      object: "chat.completion",
      created: 1,
      model: "up",
      choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
      usage: { prompt_tokens: input, completion_tokens: output, total_tokens: input + output },
    });
  }
  if (request.path.endsWith("/responses")) {
    const input = openaiResponsesInput(body);
    return Response.json({
      id: "resp_1",
      object: "response",
      created_at: 1,
      status: "completed",
      model: "up",
      output: [
        {
          type: "message",
          id: "msg_1",
          role: "assistant",
          status: "completed",
          content: [{ type: "output_text", text: "ok", annotations: [] }],
        },
      ],
      usage: {
        input_tokens: input,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: output,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: input + output,
      },
    });
  }
  return Response.json({
    id: "msg_1",
    type: "message",
    role: "assistant",
    model: "up",
    content: [{ type: "text", text: "ok" }],
    stop_reason: "end_turn",
    stop_sequence: null,
    usage: { input_tokens: anthropicInput(body), output_tokens: output },
  });
}

beforeAll(async () => {
  upstream = startRecordingUpstream(answer);
  gw = await startGateway({
    config: `
[bootstrap]
balance_usd = "1000"

[routing]
max_attempts = 1

[[channels]]
kind = "openai-chat"
name = "up-chat"
base_url = "${upstream.url}/v1"
models = ["${CHAT_MODEL}"]

[[channels]]
kind = "openai-responses"
name = "up-responses"
base_url = "${upstream.url}/v1"
models = ["${RESPONSES_MODEL}"]

[[channels]]
kind = "anthropic"
name = "up-messages"
base_url = "${upstream.url}"
models = ["${MESSAGES_MODEL}"]
`,
  });
});

afterAll(async () => {
  await gw.dispose();
  await upstream.stop();
});

/** A key on a new account holding `usd`, usable once the gateway has loaded it. */
async function fundedKey(name: string, usd: string): Promise<string> {
  expect((await gw.cli(["accounts", "create", name, "--balance", usd])).code).toBe(0);
  const created = await gw.cli(["keys", "create", "--account", name, "--name", name]);
  expect(created.code).toBe(0);
  const secret = created.stdout.trim();
  for (let i = 0; i < 500; i++) {
    const res = await fetch(`${gw.url}/v1/dashboard/billing/balance`, {
      headers: { authorization: `Bearer ${secret}` },
    });
    await res.arrayBuffer();
    if (res.status === 200) return secret;
    await Bun.sleep(20);
  }
  throw new Error(`key ${name} never became usable`);
}

const PATHS = { chat: "/v1/chat/completions", responses: "/v1/responses", messages: "/v1/messages" };
type Protocol = keyof typeof PATHS;

function post(secret: string, protocol: Protocol, body: Obj): Promise<Response> {
  return fetch(`${gw.url}${PATHS[protocol]}`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${secret}`,
      "content-type": "application/json",
      "anthropic-version": "2023-06-01",
    },
    body: JSON.stringify(body),
  });
}

describe("the regression: image parts are reserved", () => {
  test("$0.0001 and 20 parallel chats of 50 image parts: the balance never goes below zero, the excess gets 429", async () => {
    const secret = await fundedKey("poor-images", "0.0001");
    const start = (await balance(secret)).balance;
    const images = Array.from({ length: 50 }, () => ({
      type: "image_url",
      image_url: { url: pngDataUrl(1024, 1024), detail: "low" },
    }));
    const body = {
      model: CHAT_MODEL,
      max_tokens: 16,
      messages: [{ role: "user", content: [{ type: "text", text: "Describe these." }, ...images] }],
    };
    const answers = await Promise.all(Array.from({ length: 20 }, () => post(secret, "chat", body)));
    const statuses = answers.map((r) => r.status);
    for (const r of answers) {
      const json = (await r.json()) as { error?: { code: string } };
      if (r.status !== 200) expect(json.error?.code).toBe("insufficient_quota");
    }
    expect(statuses.every((s) => s === 200 || s === 429)).toBe(true);
    // 50 low-detail images alone are 4,250 tokens (425,000 nano-USD): none fits in 100,000.
    expect(statuses.filter((s) => s === 429).length).toBe(20);
    const end = await balance(secret);
    expect(end.balance).toBe(start);
    expect(end.balance).toBeGreaterThanOrEqual(0);
  }, 30_000);

  test("a balance for a few: every admitted chat settles within it, the balance ends at or above zero", async () => {
    const secret = await fundedKey("some-images", "0.002");
    const images = Array.from({ length: 50 }, (_, i) => ({
      type: "image_url",
      image_url: { url: i % 2 === 0 ? pngDataUrl(3000, 2000) : "https://img.test/800x600.png" },
    }));
    const body = { model: CHAT_MODEL, max_tokens: 16, messages: [{ role: "user", content: images }] };
    const answers = await Promise.all(Array.from({ length: 20 }, () => post(secret, "chat", body)));
    for (const r of answers) {
      const json = (await r.json()) as { error?: { code: string } };
      if (r.status !== 200) expect(json.error?.code).toBe("insufficient_quota");
    }
    const end = await balance(secret);
    expect(end.balance).toBeGreaterThanOrEqual(0);
    expect(end.reserved).toBe(0);
  }, 30_000);
});

describe("what has no bound of its own is reserved at the context window; what has none at all is refused", () => {
  const refused: [Protocol, string, Obj][] = [
    [
      "chat",
      "messages[0].content[0]",
      {
        model: CHAT_MODEL,
        messages: [
          { role: "user", content: [{ type: "input_audio", input_audio: { data: "AAAA", format: "wav" } }] },
        ],
      },
    ],
    [
      "responses",
      "tools[0]",
      {
        model: RESPONSES_MODEL,
        input: "hi",
        tools: [{ type: "mcp", server_label: "x", server_url: "https://x" }],
      },
    ],
  ];
  for (const [protocol, param, body] of refused) {
    test(`refused with 400: ${protocol} ${param}`, async () => {
      upstream.clear();
      const res = await post(gw.key ?? "", protocol, body);
      expect(res.status).toBe(400);
      const json = (await res.json()) as { error: { param?: string; message: string } };
      expect(json.error.param).toBe(param);
      expect(json.error.message).toContain(param);
      expect(upstream.requests.length).toBe(0);
    });
  }

  const user = (content: unknown) => [{ role: "user", content }];
  // [protocol, what, body, the model's context window priced at its input rate (nano-USD)]
  const contextual: [Protocol, string, Obj, number][] = [
    [
      "chat",
      "a file part",
      {
        model: CHAT_MODEL,
        max_tokens: 16,
        messages: user([
          { type: "text", text: "hi" },
          { type: "file", file: { file_id: "f" } },
        ]),
      },
      400_000 * 100,
    ],
    [
      "responses",
      'an image with detail "original" by URL',
      {
        model: RESPONSES_MODEL,
        max_output_tokens: 16,
        input: user([{ type: "input_image", image_url: "https://img.test/1x1.png", detail: "original" }]),
      },
      1_050_000 * 400,
    ],
    [
      "responses",
      "previous_response_id",
      { model: RESPONSES_MODEL, max_output_tokens: 16, input: "hi", previous_response_id: "resp_x" },
      1_050_000 * 400,
    ],
    [
      "messages",
      "a PDF document",
      {
        model: MESSAGES_MODEL,
        max_tokens: 16,
        messages: user([
          { type: "document", source: { type: "base64", media_type: "application/pdf", data: "JVBERi0=" } },
        ]),
      },
      200_000 * 100,
    ],
  ];
  for (const [protocol, what, body, contextNanos] of contextual) {
    test(`${protocol}, ${what}: the context window is reserved (429 on $0.01, admitted when it fits)`, async () => {
      const poor = await fundedKey(`ctx-${protocol}-${what.length}`, "0.01");
      const refusedRes = await post(poor, protocol, body);
      expect(refusedRes.status).toBe(429);
      expect(JSON.stringify(await refusedRes.json())).toContain("cannot cover this request");
      const rich = await fundedKey(`ctx-rich-${protocol}-${what.length}`, "10");
      currentKey = rich;
      seenReserved.length = 0;
      try {
        const res = await post(rich, protocol, body);
        expect(res.status).toBe(200);
        await res.arrayBuffer();
      } finally {
        currentKey = "";
      }
      expect(seenReserved[0] ?? 0).toBeGreaterThanOrEqual(contextNanos);
    }, 30_000);
  }
});

// ---- the property: settled ≤ reserved, for random requests ----

const detail = fc.constantFrom(undefined, "low", "high", "auto");
const side = fc.integer({ min: 1, max: 6000 });
const image = fc.record({ width: side, height: side, inline: fc.boolean(), detail });
const text = fc.string({ minLength: 0, maxLength: 60 });
const content = fc.array(
  fc.oneof(
    text.map((t) => ({ text: t })),
    image,
  ),
  { minLength: 1, maxLength: 4 },
);
const tool = fc.record({
  name: fc.stringMatching(/^[a-z_]{1,12}$/),
  description: text,
  props: fc.dictionary(
    fc.stringMatching(/^[a-z]{1,8}$/),
    fc.record({
      type: fc.constantFrom("string", "number"),
      enum: fc.array(fc.stringMatching(/^[a-z]{1,3}$/), { maxLength: 8 }),
    }),
    { maxKeys: 4 },
  ),
});
const request = fc.record({
  protocol: fc.constantFrom<Protocol>("chat", "responses", "messages"),
  model: fc.constantFrom(CHAT_MODEL, RESPONSES_MODEL, MESSAGES_MODEL),
  turns: fc.array(content, { minLength: 1, maxLength: 6 }),
  name: fc.option(fc.stringMatching(/^[a-z]{1,10}$/), { nil: undefined }),
  tools: fc.array(tool, { maxLength: 3 }),
  maxTokens: fc.integer({ min: 1, max: 400 }),
  system: fc.option(text, { nil: undefined }),
  format: fc.constantFrom(undefined, "json_object", "json_schema", "open_schema"),
});
type Generated = typeof request extends fc.Arbitrary<infer T> ? T : never;

const url = (i: { width: number; height: number; inline: boolean }) =>
  i.inline ? pngDataUrl(i.width, i.height) : `https://img.test/${i.width}x${i.height}.png`;

function partOf(protocol: Protocol, p: Generated["turns"][number][number]): Obj {
  if ("text" in p) return { type: protocol === "responses" ? "input_text" : "text", text: p.text || "." };
  if (protocol === "chat")
    return { type: "image_url", image_url: { url: url(p), ...(p.detail ? { detail: p.detail } : {}) } };
  if (protocol === "responses")
    return { type: "input_image", image_url: url(p), ...(p.detail ? { detail: p.detail } : {}) };
  return p.inline
    ? { type: "image", source: { type: "base64", media_type: "image/png", data: url(p).split(",")[1] } }
    : { type: "image", source: { type: "url", url: url(p) } };
}

function schemaOf(t: Generated["tools"][number]): Obj {
  const properties: Obj = {};
  for (const [key, p] of Object.entries(t.props)) properties[key] = p.enum.length > 0 ? p : { type: p.type };
  return { type: "object", properties };
}

function bodyOf(g: Generated): Obj {
  const turns = g.turns.map((c, i) => ({
    role: i % 2 === 0 ? "user" : "assistant",
    content: c.map((p) => partOf(g.protocol, i % 2 === 0 ? p : { text: "text" in p ? p.text : "seen" })),
  }));
  if (turns.at(-1)?.role === "assistant")
    turns.push({ role: "user", content: [partOf(g.protocol, { text: "go" })] });
  if (g.protocol === "responses") {
    for (const t of turns)
      if (t.role === "assistant") t.content = t.content.map((p) => ({ ...p, type: "output_text" }));
  }
  const tools = g.tools.map((t) =>
    g.protocol === "messages"
      ? { name: t.name, description: t.description, input_schema: schemaOf(t) }
      : g.protocol === "chat"
        ? {
            type: "function",
            function: { name: t.name, description: t.description, parameters: schemaOf(t) },
          }
        : { type: "function", name: t.name, description: t.description, parameters: schemaOf(t) },
  );
  const model = g.protocol === "messages" ? g.model : g.model;
  const common: Obj = { model, ...(tools.length > 0 ? { tools } : {}) };
  if (g.protocol === "chat") {
    const messages: Obj[] = turns.map((t, i) => (i === 0 && g.name ? { ...t, name: g.name } : t));
    if (g.system !== undefined) messages.unshift({ role: "system", content: g.system || "." });
    return { ...common, messages, max_completion_tokens: g.maxTokens, ...formatOf(g) };
  }
  if (g.protocol === "responses")
    return {
      ...common,
      input: turns,
      max_output_tokens: Math.max(16, g.maxTokens),
      ...(g.system ? { instructions: g.system } : {}),
      ...formatOf(g),
    };
  const system = g.system ? { system: g.system } : {};
  return { ...common, messages: turns, max_tokens: g.maxTokens, ...system, ...formatOf(g) };
}

/** The output format in the generated request's protocol (an open schema a translation must quote). */
function formatOf(g: Generated): Obj {
  if (g.format === undefined) return {};
  const schema =
    g.format === "open_schema"
      ? { type: "object", additionalProperties: true }
      : {
          type: "object",
          properties: { answer: { type: "string" } },
          required: ["answer"],
          additionalProperties: false,
        };
  if (g.protocol === "messages")
    return g.format === "json_object" ? {} : { output_config: { format: { type: "json_schema", schema } } };
  const objectFormat = { type: "json_object" };
  if (g.protocol === "responses")
    return {
      text: {
        format: g.format === "json_object" ? objectFormat : { type: "json_schema", name: "out", schema },
      },
    };
  return {
    response_format:
      g.format === "json_object"
        ? objectFormat
        : { type: "json_schema", json_schema: { name: "out", schema } },
  };
}

test("property: for random requests in every protocol, native and translated, settled cost ≤ reservation", async () => {
  const secret = await fundedKey("property", "100");
  currentKey = secret;
  let runs = 0;
  try {
    await fc.assert(
      fc.asyncProperty(request, async (g) => {
        seenReserved.length = 0;
        const before = (await balance(secret)).balance;
        const res = await post(secret, g.protocol, bodyOf(g));
        const said = await res.text();
        if (res.status !== 200) throw new Error(`status ${res.status}: ${said}`);
        const after = (await balance(secret)).balance;
        const settled = before - after;
        expect(seenReserved.length).toBe(1);
        const reserved = seenReserved[0] ?? 0;
        runs++;
        if (settled > reserved) throw new Error(`settled ${settled} > reserved ${reserved}`);
      }),
      { seed: 2525, numRuns: 60, endOnFailure: true },
    );
  } finally {
    currentKey = "";
  }
  expect(runs).toBe(60);
}, 60_000);
