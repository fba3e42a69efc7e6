// POST /v1/embeddings against the compiled gateway on its default configuration (every model on
// the in-process simulator): the answer's shape against the published response schema, the
// simulator's vectors (unit length, equal inputs equal, the model's dimension, `dimensions`,
// float and base64 equal), every bad input of the issue answered 4xx naming the field with
// nothing recorded or charged, a model of the wrong family on either side, group access, RPM,
// balance and daily cap, and the usage record, `modelgate usage` and /metrics in input tokens.
// Many long inputs are counted in the token thread: /healthz answers meanwhile, the counts exact,
// the input over its limit still named.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import net from "node:net";
import * as v from "valibot";
import { INLINE_COUNT_CHARS } from "../../src/catalog/token-thread.ts";
import { countTokens } from "../../src/catalog/tokenizer.ts";
import { vectorFromBase64 } from "../../src/wire/embeddings.ts";
import { EmbeddingResponseSchema } from "../contract/media-schemas.ts";
import { createKey, type RunningGateway, startGateway } from "../helpers/gateway.ts";
import { hostPort, parseRaw, type RawResponse } from "../helpers/raw-http.ts";
import { keyAnswers, waitFor } from "../helpers/wait.ts";

let gw: RunningGateway;

beforeAll(async () => {
  gw = await startGateway();
}, 30_000);
afterAll(async () => {
  await gw.dispose();
}, 30_000);

interface Item {
  index: number;
  embedding: number[] | string;
}
interface Answer {
  data: Item[];
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
}

function embed(body: Record<string, unknown>, key = gw.key ?? ""): Promise<Response> {
  return fetch(`${gw.url}/v1/embeddings`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

async function ok(body: Record<string, unknown>): Promise<Answer> {
  const response = await embed(body);
  const json: unknown = await response.json();
  expect({ status: response.status, json }).toMatchObject({ status: 200 });
  const checked = v.safeParse(EmbeddingResponseSchema, json);
  expect(checked.issues).toBeUndefined();
  return json as Answer;
}

function floats(item: Item | undefined): number[] {
  if (item === undefined) throw new Error("no item");
  return typeof item.embedding === "string" ? (vectorFromBase64(item.embedding) ?? []) : item.embedding;
}

const norm = (x: number[]) => Math.sqrt(x.reduce((s, a) => s + a * a, 0));

interface Row {
  request_id: string;
  key_id: string;
  model: string;
  endpoint: string;
  status: number;
  input_tokens: number;
  output_tokens: number;
  cost_nanos: number;
  usage_source: string;
  detail: string;
}

function rows(): Row[] {
  const db = new Database(gw.dbUrl.replace(/^sqlite:\/\//, ""), { readonly: true });
  try {
    return db
      .query("SELECT * FROM usage_records WHERE endpoint = '/v1/embeddings' ORDER BY id")
      .all() as Row[];
  } finally {
    db.close();
  }
}

async function keyWith(args: string[]): Promise<{ secret: string; id: string }> {
  const key = await createKey(gw, args);
  await keyAnswers(gw.url, key.secret, 200);
  return key;
}

describe("answers", () => {
  test("a string: one unit-length vector of the model's dimension, usage in tokens", async () => {
    const answer = await ok({ model: "modelx-embed-3-small", input: "The quick brown fox" });
    expect(answer.model).toBe("modelx-embed-3-small");
    expect(answer.data).toHaveLength(1);
    const vector = floats(answer.data[0]);
    expect(vector).toHaveLength(1536);
    expect(norm(vector)).toBeCloseTo(1, 5);
    expect(answer.usage.prompt_tokens).toBe(4);
    expect(answer.usage.total_tokens).toBe(4);
  });

  test("each model's dimension; dimensions shortens to a unit vector", async () => {
    expect(floats((await ok({ model: "modelx-embed-3-large", input: "a" })).data[0])).toHaveLength(3072);
    expect(floats((await ok({ model: "modelx-embed-2", input: "a" })).data[0])).toHaveLength(1536);
    const short = floats((await ok({ model: "modelx-embed-3-large", input: "a", dimensions: 256 })).data[0]);
    expect(short).toHaveLength(256);
    expect(norm(short)).toBeCloseTo(1, 5);
  });

  test("an array in input order; equal inputs give equal vectors, different ones differ", async () => {
    const answer = await ok({ model: "modelx-embed-3-small", input: ["alpha", "beta", "alpha"] });
    expect(answer.data.map((d) => d.index)).toEqual([0, 1, 2]);
    const [a, b, c] = answer.data.map(floats);
    expect(a).toEqual(c as number[]);
    expect(a).not.toEqual(b as number[]);
    const again = await ok({ model: "modelx-embed-3-small", input: "beta" });
    expect(floats(again.data[0])).toEqual(b as number[]);
  });

  test("base64 decodes to the float answer's values", async () => {
    const asFloat = await ok({ model: "modelx-embed-3-small", input: ["x y z"], encoding_format: "float" });
    const asBase64 = await ok({ model: "modelx-embed-3-small", input: ["x y z"], encoding_format: "base64" });
    expect(typeof asBase64.data[0]?.embedding).toBe("string");
    expect(floats(asBase64.data[0])).toEqual(floats(asFloat.data[0]));
  });

  test("token ids and arrays of token ids: usage is their count", async () => {
    expect((await ok({ model: "modelx-embed-3-small", input: [1, 2, 3] })).usage.prompt_tokens).toBe(3);
    const many = await ok({
      model: "modelx-embed-3-small",
      input: [
        [1, 2],
        [3, 4, 5],
      ],
    });
    expect(many.data).toHaveLength(2);
    expect(many.usage.prompt_tokens).toBe(5);
  });
});

describe("bad input: 4xx naming the field, nothing recorded", () => {
  const long = "word ".repeat(8200);
  const cases: [string, Record<string, unknown>, number, string][] = [
    ["missing input", { model: "modelx-embed-3-small" }, 400, "input"],
    ["empty string", { model: "modelx-embed-3-small", input: "" }, 400, "input"],
    ["empty array", { model: "modelx-embed-3-small", input: [] }, 400, "input"],
    ["an empty string in the array", { model: "modelx-embed-3-small", input: ["a", ""] }, 400, "input[1]"],
    ["an empty token array", { model: "modelx-embed-3-small", input: [[1], []] }, 400, "input[1]"],
    ["mixed items", { model: "modelx-embed-3-small", input: ["a", 3] }, 400, "input[1]"],
    ["a negative token id", { model: "modelx-embed-3-small", input: [1, -2] }, 400, "input"],
    ["more than 2,048 inputs", { model: "modelx-embed-3-small", input: Array(2049).fill("a") }, 400, "input"],
    ["one input over 8,192 tokens", { model: "modelx-embed-3-small", input: ["a", long] }, 400, "input[1]"],
    ["a single input over 8,192 tokens", { model: "modelx-embed-3-small", input: long }, 400, "input"],
    [
      "dimensions on a model without it",
      { model: "modelx-embed-2", input: "a", dimensions: 8 },
      400,
      "dimensions",
    ],
    [
      "dimensions above the model's",
      { model: "modelx-embed-3-small", input: "a", dimensions: 1537 },
      422,
      "dimensions",
    ],
    ["dimensions 0", { model: "modelx-embed-3-small", input: "a", dimensions: 0 }, 422, "dimensions"],
    [
      "dimensions not whole",
      { model: "modelx-embed-3-small", input: "a", dimensions: 1.5 },
      400,
      "dimensions",
    ],
    [
      "unknown encoding_format",
      { model: "modelx-embed-3-small", input: "a", encoding_format: "int8" },
      400,
      "encoding_format",
    ],
    ["an unknown field", { model: "modelx-embed-3-small", input: "a", truncate: true }, 400, "truncate"],
    ["a text model", { model: "modelx-5.5", input: "a" }, 400, "model"],
    ["an image model", { model: "modelx-image-2", input: "a" }, 400, "model"],
    ["an unknown model", { model: "text-embedding-9", input: "a" }, 400, "model"],
  ];
  let refused: { secret: string; id: string };
  beforeAll(async () => {
    refused = await keyWith(["--account", "default", "--name", "bad-input"]);
  }, 30_000);

  test.each(cases)("%s → %d naming %s", async (_label, body, status, param) => {
    const response = await embed(body, refused.secret);
    const json = (await response.json()) as { error: { param: string | null; message: string } };
    expect({ status: response.status, param: json.error.param }).toEqual({ status, param });
    expect(json.error.message.length).toBeGreaterThan(10);
  });

  test("none of them was recorded or charged: the key's one record is its good request", async () => {
    const good = await embed({ model: "modelx-embed-3-small", input: "fine" }, refused.secret);
    expect(good.status).toBe(200);
    const id = good.headers.get("x-request-id");
    await waitFor("the usage record", () => rows().find((r) => r.request_id === id));
    expect(
      rows()
        .filter((r) => r.key_id === refused.id)
        .map((r) => r.request_id),
    ).toEqual([id ?? ""]);
  });

  test("the family refusals name the endpoint the model belongs to, both ways", async () => {
    const onEmbeddings = await embed({ model: "modelx-5.5", input: "a" });
    expect(((await onEmbeddings.json()) as { error: { message: string } }).error.message).toContain(
      "/v1/chat/completions",
    );
    const onChat = await fetch(`${gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${gw.key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "modelx-embed-3-small", messages: [{ role: "user", content: "hi" }] }),
    });
    const error = ((await onChat.json()) as { error: { message: string; param: string } }).error;
    expect(onChat.status).toBe(400);
    expect(error.param).toBe("model");
    expect(error.message).toContain("POST /v1/embeddings");
  });

  test("an upstream error is relayed and nothing is charged", async () => {
    const response = await embed({ model: "modelx-embed-3-small", input: ["sim:error 400"] });
    expect(response.status).toBe(400);
    const last = await waitFor("the usage record", () => rows().find((r) => r.status === 400));
    expect(last.cost_nanos).toBe(0);
    expect(last.input_tokens).toBe(0);
  });
});

describe("keys, groups and limits", () => {
  test("a group without embedding models: 403; /v1/models lists them only where allowed", async () => {
    expect((await gw.cli(["groups", "set", "chat-only", "--models", "modelx-5*"])).code).toBe(0);
    const key = await keyWith(["--account", "default", "--group", "chat-only", "--name", "chat-only"]);
    const refused = await embed({ model: "modelx-embed-3-small", input: "a" }, key.secret);
    expect(refused.status).toBe(403);
    const list = await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key.secret}` } });
    const ids = ((await list.json()) as { data: { id: string }[] }).data.map((m) => m.id);
    expect(ids.some((id) => id.startsWith("modelx-embed"))).toBe(false);
    const all = await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${gw.key}` } });
    const allIds = ((await all.json()) as { data: { id: string }[] }).data.map((m) => m.id);
    expect(allIds).toEqual(
      expect.arrayContaining(["modelx-embed-3-large", "modelx-embed-3-small", "modelx-embed-2"]),
    );
  });

  test("RPM: the second request within the minute is 429 and not recorded", async () => {
    const key = await keyWith(["--account", "default", "--name", "rpm1", "--rpm", "1"]);
    // The /v1/models probe that waited for the key is not metered: this is its first request.
    const first = await embed({ model: "modelx-embed-3-small", input: "a" }, key.secret);
    expect(first.status).toBe(200);
    const second = await embed({ model: "modelx-embed-3-small", input: "a" }, key.secret);
    expect(second.status).toBe(429);
    expect(((await second.json()) as { error: { code: string } }).error.code).toBe("rate_limit_exceeded");
    await waitFor("the usage record", () =>
      rows().filter((r) => r.key_id === key.id).length === 1 ? true : undefined,
    );
  });

  test("an empty balance and a daily cap below the reservation: 429, not recorded", async () => {
    expect((await gw.cli(["accounts", "create", "empty", "--balance", "0"])).code).toBe(0);
    const poor = await keyWith(["--account", "empty", "--name", "poor"]);
    const broke = await embed({ model: "modelx-embed-3-small", input: "a b c" }, poor.secret);
    expect(broke.status).toBe(429);
    expect(((await broke.json()) as { error: { code: string } }).error.code).toBe("insufficient_quota");
    const capped = await keyWith(["--account", "default", "--name", "capped", "--daily-cap", "0.000000001"]);
    const over = await embed({ model: "modelx-embed-3-small", input: "a b c" }, capped.secret);
    expect(over.status).toBe(429);
    expect(((await over.json()) as { error: { code: string } }).error.code).toBe("daily_quota_exceeded");
    expect(rows().filter((r) => r.key_id === poor.id || r.key_id === capped.id)).toEqual([]);
  });
});

describe("usage", () => {
  test("the record holds the input tokens, their price and the source; usage and /metrics show them", async () => {
    const key = await keyWith(["--account", "default", "--name", "meter"]);
    const response = await embed(
      { model: "modelx-embed-3-small", input: ["one two three", "four"] },
      key.secret,
    );
    const id = response.headers.get("x-request-id");
    const answer = (await response.json()) as Answer;
    expect(answer.usage.prompt_tokens).toBe(4);
    const row = await waitFor("the usage record", () => rows().find((r) => r.request_id === id));
    // modelx-embed-3-small: $0.02 per million input tokens = 20 nano-USD a token.
    expect(row).toMatchObject({
      input_tokens: 4,
      output_tokens: 0,
      cost_nanos: 80,
      usage_source: "reported",
      status: 200,
    });
    expect(JSON.parse(row.detail)).toMatchObject({
      inputs: 2,
      counted_tokens: 4,
      encoding_format: "float",
      dimensions: 1536,
    });
    const usage = await gw.cli(["usage", "--key", key.id, "--group-by", "model", "--json"]);
    const totals = JSON.parse(usage.stdout) as { model: string; input_tokens: number; cost_nanos: number }[];
    expect(totals).toEqual([
      expect.objectContaining({ model: "modelx-embed-3-small", input_tokens: 4, cost_nanos: 80 }),
    ]);
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).toMatch(/modelgate_tokens_total\{model="modelx-embed-3-small",[^}]*type="input"\} \d+/);
  });
});

/** Resolves with the raw response to `head` + `body`, the body's last byte sent by `sendLast`. */
function heldRequest(
  head: string,
  body: Buffer,
): { sendLast: () => void; sent: Promise<void>; answer: Promise<RawResponse> } {
  const { host, port } = hostPort(gw.url);
  const socket = net.connect(port, host);
  const sent = new Promise<void>((resolve, reject) => {
    socket.once("error", reject);
    socket.once("connect", () =>
      socket.write(Buffer.concat([Buffer.from(head), body.subarray(0, -1)]), () => resolve()),
    );
  });
  const answer = new Promise<RawResponse>((resolve, reject) => {
    const chunks: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", reject);
    socket.on("close", () => resolve(parseRaw(Buffer.concat(chunks).toString("utf8"))));
  });
  return { sendLast: () => socket.write(body.subarray(-1)), sent, answer };
}

const healthy = async (): Promise<void> => {
  const r = await fetch(`${gw.url}/healthz`);
  await r.arrayBuffer();
  expect(r.status).toBe(200);
};

describe("many long inputs are counted off the event loop, each count still known", () => {
  test("/healthz answers while 2.4 M characters of inputs are counted; the one over its limit is named", async () => {
    // 37 inputs of ~8,000 tokens (within the 300,000 of a request) and one of ~8,750 tokens, over
    // the 8,192 of one input. Counted on the event loop, the gateway answered nothing else until
    // the count was done and the 400 written (measured: 0 to 2 /healthz below; in the thread, ~350).
    const input = [...Array<string>(37).fill("a".repeat(64_000)), "a".repeat(70_000)];
    const body = Buffer.from(JSON.stringify({ model: "modelx-embed-3-small", input }));
    const head = [
      "POST /v1/embeddings HTTP/1.1",
      `Host: ${hostPort(gw.url).host}`,
      `Authorization: Bearer ${gw.key}`,
      "Content-Type: application/json",
      `Content-Length: ${body.length}`,
      "Connection: close",
      "",
      "",
    ].join("\r\n");
    const held = heldRequest(head, body);
    await held.sent;
    // Each /healthz is a turn of the gateway's loop, in which it also reads the body the kernel
    // holds (at most a few MB, read 512 KB a turn): after 20, the last byte is all that is left.
    for (let i = 0; i < 20; i++) await healthy();
    let answered = false;
    const answer = held.answer.finally(() => {
      answered = true;
    });
    held.sendLast();
    // Only /healthz answered after the body was complete and before the embeddings answer count:
    // on the event loop the count left room for the one already on its way, if any.
    let between = 0;
    while (!answered) {
      await healthy();
      if (!answered) between++;
    }
    expect(between).toBeGreaterThanOrEqual(10);
    const { status, body: text } = await answer;
    expect(status).toBe(400);
    const error = (JSON.parse(text) as { error: { param: string; message: string } }).error;
    expect(error.param).toBe("input[37]");
    expect(error.message).toStartWith(`input[37] is ${countTokens(input[37] ?? "")} tokens`);
  }, 60_000);

  test("inputs counted in the thread are billed on their exact counts", async () => {
    const input = Array.from({ length: 40 }, (_, i) =>
      Array.from({ length: 400 }, (_, j) => `w${(i * 7 + j) % 997}`).join(" "),
    );
    expect(input.join("").length).toBeGreaterThan(INLINE_COUNT_CHARS);
    const exact = input.reduce((sum, text) => sum + countTokens(text), 0);
    const response = await embed({ model: "modelx-embed-3-small", input });
    const id = response.headers.get("x-request-id");
    const answer = (await response.json()) as Answer;
    expect(answer.data).toHaveLength(40);
    expect(answer.usage.prompt_tokens).toBe(exact);
    const row = await waitFor("the usage record", () => rows().find((r) => r.request_id === id));
    expect(row.input_tokens).toBe(exact);
  });
});
