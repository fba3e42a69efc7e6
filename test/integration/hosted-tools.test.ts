// The compiled gateway forwarding hosted (server-side) tools to recording Responses and Anthropic
// upstreams: the calls the upstream reports are billed at [billing.tools] prices exactly once and
// stored in the usage record; Codex's `{"type":"web_search"}` is forwarded as sent; Cline's
// `web_search` + `image_generation` pass on a default config, each image generation call priced
// from the image table; an unpriced hosted tool is refused with 400 naming it, and forwarded when
// the operator allows it.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type RunningGateway, startGateway } from "../helpers/gateway.ts";
import { byteSlices, type RecordingUpstream, startRecordingUpstream } from "../helpers/recording-upstream.ts";
import { recordsOf as storedRecords } from "../helpers/usage-records.ts";

const RESPONSES_MODEL = "modelx-5.4";
const MESSAGES_MODEL = "modelz-sonnet-4-6";

let upstream: RecordingUpstream;
let gw: RunningGateway;
let allowing: RunningGateway;
let db: Database;
let seq = 0;

const channels = (url: string) => `
[routing]
max_attempts = 1

[[channels]]
kind = "openai-responses"
name = "up-responses"
base_url = "${url}/v1"
models = ["${RESPONSES_MODEL}"]

[[channels]]
kind = "anthropic"
name = "up-messages"
base_url = "${url}"
models = ["${MESSAGES_MODEL}"]
`;

beforeAll(async () => {
  upstream = startRecordingUpstream(() => new Response("no script", { status: 500 }));
  [gw, allowing] = await Promise.all([
    startGateway({ config: channels(upstream.url) }),
    startGateway({ config: `${channels(upstream.url)}\n[billing.tools]\nallow_unpriced = true\n` }),
  ]);
  db = new Database(gw.dbUrl.replace(/^sqlite:\/\//, ""), { readonly: true });
});

afterAll(async () => {
  db.close();
  await Promise.all([gw.dispose(), allowing.dispose()]);
  await upstream.stop();
});

interface StoredRecord {
  input_tokens: number;
  output_tokens: number;
  tool_calls: string | null;
  usage_source: string;
  cost_nanos: number;
}

/** Every usage record of the request (by the gateway's id, or the prefix of the ids the tests sent). */
function recordsOf(requestId: string): Promise<StoredRecord[]> {
  return storedRecords<StoredRecord>(db, requestId, "*", "prefix", gw);
}

async function post(
  path: string,
  body: Record<string, unknown>,
  on: RunningGateway = gw,
): Promise<{ res: Response; requestId: string }> {
  const requestId = `hosted-${process.pid}-${++seq}`;
  const res = await fetch(`${on.url}${path}`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${on.key}`,
      "content-type": "application/json",
      "x-request-id": requestId,
      "anthropic-version": "2023-06-01",
    },
    body: JSON.stringify(body),
  });
  // The gateway's own id keys the usage record; the client's is echoed beside it.
  expect(res.headers.get("x-client-request-id")).toBe(requestId);
  return { res, requestId: res.headers.get("x-request-id") ?? "" };
}

const event = (type: string, body: Record<string, unknown>) =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...body })}\n\n`;
const search = (id: string) => ({
  type: "web_search_call",
  id,
  status: "completed",
  action: { type: "search", query: "weather" },
});
const message = {
  type: "message",
  id: "msg_1",
  role: "assistant",
  status: "completed",
  content: [{ type: "output_text", text: "Sunny.", annotations: [] }],
};

/** A Responses stream with two web searches: each item done, then all again in response.completed. */
function responsesStream(): string {
  const response = {
    id: "resp_1",
    object: "response",
    model: "upstream-model",
    status: "in_progress",
    output: [],
  };
  return [
    event("response.created", { sequence_number: 0, response }),
    event("response.output_item.done", { sequence_number: 1, output_index: 0, item: search("ws_1") }),
    event("response.output_item.done", { sequence_number: 2, output_index: 1, item: search("ws_2") }),
    event("response.output_text.delta", {
      sequence_number: 3,
      output_index: 2,
      content_index: 0,
      delta: "Sunny.",
    }),
    event("response.output_item.done", { sequence_number: 4, output_index: 2, item: message }),
    event("response.completed", {
      sequence_number: 5,
      response: {
        ...response,
        status: "completed",
        output: [search("ws_1"), search("ws_2"), message],
        usage: { input_tokens: 100, output_tokens: 20, total_tokens: 120 },
      },
    }),
  ].join("");
}

const SERVER_TOOL_USAGE = {
  input_tokens: 100,
  output_tokens: 20,
  server_tool_use: { web_search_requests: 3 },
};

function messagesStream(): string {
  const start = { id: "msg_1", type: "message", role: "assistant", model: "upstream-model", content: [] };
  return [
    event("message_start", { message: { ...start, usage: { input_tokens: 100, output_tokens: 1 } } }),
    event("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
    event("content_block_delta", { index: 0, delta: { type: "text_delta", text: "Sunny." } }),
    event("content_block_stop", { index: 0 }),
    event("message_delta", {
      delta: { stop_reason: "end_turn", stop_sequence: null },
      usage: { output_tokens: 20, server_tool_use: { web_search_requests: 3 } },
    }),
    event("message_stop", {}),
  ].join("");
}

describe("hosted tool calls are billed exactly once", () => {
  test("a Responses stream with two web_search_call items: 2 × $0.01 on top of the tokens", async () => {
    upstream.answer(() => ({ chunks: byteSlices(responsesStream(), 7) }));
    const tools = [{ type: "web_search" }];
    const { res, requestId } = await post("/v1/responses", {
      model: RESPONSES_MODEL,
      input: "Weather?",
      stream: true,
      tools,
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("response.completed");
    // Codex's default tool reaches the upstream as the client sent it.
    expect((upstream.last().json as { tools: unknown }).tools).toEqual(tools);
    const records = await recordsOf(requestId);
    expect(records.length).toBe(1);
    expect(records[0]?.usage_source).toBe("reported");
    expect(JSON.parse(records[0]?.tool_calls ?? "null")).toEqual({ web_search: 2 });
    // 100 × 0.40 + 20 × 1.60 USD/Mtok = 72,000 nano-USD; 2 searches × 10,000,000.
    expect(records[0]?.cost_nanos).toBe(20_072_000);
  });

  const anthropic = {
    model: MESSAGES_MODEL,
    max_tokens: 200,
    messages: [{ role: "user", content: "Weather?" }],
  };
  const webSearch = { tools: [{ type: "web_search_20250305", name: "web_search", max_uses: 5 }] };
  // 100 × 0.30 + 20 × 1.20 USD/Mtok = 54,000 nano-USD; 3 searches × 10,000,000.
  const ANTHROPIC_COST = 30_054_000;

  test("an Anthropic stream with server_tool_use.web_search_requests: 3", async () => {
    upstream.answer(() => ({ chunks: byteSlices(messagesStream(), 7) }));
    const { res, requestId } = await post("/v1/messages", { ...anthropic, ...webSearch, stream: true });
    expect(res.status).toBe(200);
    await res.text();
    const [record, ...more] = await recordsOf(requestId);
    expect(more.length).toBe(0);
    expect(JSON.parse(record?.tool_calls ?? "null")).toEqual({ web_search: 3 });
    expect(record?.cost_nanos).toBe(ANTHROPIC_COST);
  });

  test("an Anthropic answer with server_tool_use.web_search_requests: 3", async () => {
    upstream.answer(() =>
      Response.json({
        id: "msg_1",
        type: "message",
        role: "assistant",
        model: "upstream-model",
        content: [{ type: "text", text: "Sunny." }],
        stop_reason: "end_turn",
        stop_sequence: null,
        usage: SERVER_TOOL_USAGE,
      }),
    );
    const { res, requestId } = await post("/v1/messages", { ...anthropic, ...webSearch });
    expect(res.status).toBe(200);
    const [record, ...more] = await recordsOf(requestId);
    expect(more.length).toBe(0);
    expect(JSON.parse(record?.tool_calls ?? "null")).toEqual({ web_search: 3 });
    expect(record?.cost_nanos).toBe(ANTHROPIC_COST);
  });
});

describe("Cline's Responses request: web_search and image_generation on every request, default config", () => {
  const image = (id: string) => ({
    type: "image_generation_call",
    id,
    status: "completed",
    result: Buffer.from("not really a png").toString("base64"),
  });
  const cline = {
    model: RESPONSES_MODEL,
    input: "Draw a cat.",
    tools: [{ type: "web_search" }, { type: "image_generation" }],
  };
  // 100 × 0.40 + 20 × 1.60 USD/Mtok = 72,000 nano-USD; an image generation at auto: modelx-image-1's
  // dearest generation, $0.03; a web search $0.01.
  const TOKENS = 72_000;

  test("a complete answer with one image_generation_call and one web_search_call is billed for both", async () => {
    upstream.answer(() =>
      Response.json({
        id: "resp_3",
        object: "response",
        model: "upstream-model",
        status: "completed",
        output: [search("ws_1"), image("ig_1"), message],
        usage: { input_tokens: 100, output_tokens: 20, total_tokens: 120 },
      }),
    );
    const { res, requestId } = await post("/v1/responses", cline);
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    expect((upstream.last().json as { tools: unknown }).tools).toEqual(cline.tools);
    const [record, ...more] = await recordsOf(requestId);
    expect(more.length).toBe(0);
    expect(JSON.parse(record?.tool_calls ?? "null")).toEqual({ web_search: 1, image_generation: 1 });
    expect(record?.cost_nanos).toBe(TOKENS + 10_000_000 + 30_000_000);
  });

  test("a stream whose image tool asks for low quality 1024x1024 with 2 progress images: 3 generations of $0.002", async () => {
    const response = {
      id: "resp_4",
      object: "response",
      model: "upstream-model",
      status: "in_progress",
      output: [],
    };
    const done = image("ig_2");
    const events = [
      event("response.created", { sequence_number: 0, response }),
      event("response.output_item.done", { sequence_number: 1, output_index: 0, item: done }),
      event("response.output_item.done", { sequence_number: 2, output_index: 1, item: message }),
      event("response.completed", {
        sequence_number: 3,
        response: {
          ...response,
          status: "completed",
          output: [done, message],
          usage: { input_tokens: 100, output_tokens: 20, total_tokens: 120 },
        },
      }),
    ].join("");
    upstream.answer(() => ({ chunks: byteSlices(events, 64) }));
    const tools = [
      { type: "web_search" },
      { type: "image_generation", quality: "low", size: "1024x1024", partial_images: 2 },
    ];
    const { res, requestId } = await post("/v1/responses", { ...cline, tools, stream: true });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("response.completed");
    const [record] = await recordsOf(requestId);
    expect(JSON.parse(record?.tool_calls ?? "null")).toEqual({ image_generation: 1 });
    expect(record?.cost_nanos).toBe(TOKENS + 3 * 2_000_000);
  });
});

describe("the code interpreter is billed per container, by its memory", () => {
  const item = (id: string, container: string) => ({
    type: "code_interpreter_call",
    id,
    status: "completed",
    container_id: container,
    code: "print(1)",
    outputs: null,
  });

  test("three calls in two containers, memory_limit 4g: two containers at 4 × $0.03", async () => {
    upstream.answer(() =>
      Response.json({
        id: "resp_5",
        object: "response",
        model: "upstream-model",
        status: "completed",
        output: [item("ci_1", "cntr_a"), item("ci_2", "cntr_a"), item("ci_3", "cntr_b"), message],
        usage: { input_tokens: 100, output_tokens: 20, total_tokens: 120 },
      }),
    );
    const tools = [{ type: "code_interpreter", container: { type: "auto", memory_limit: "4g" } }];
    const { res, requestId } = await post("/v1/responses", {
      model: RESPONSES_MODEL,
      input: "Plot it.",
      tools,
    });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    const [record] = await recordsOf(requestId);
    expect(JSON.parse(record?.tool_calls ?? "null")).toEqual({ code_interpreter: 2 });
    expect(record?.cost_nanos).toBe(72_000 + 2 * 120_000_000);
  });
});

describe("unpriced hosted tools", () => {
  const body = {
    model: MESSAGES_MODEL,
    max_tokens: 100,
    messages: [{ role: "user", content: "Plot it." }],
    tools: [{ type: "code_execution_20250825", name: "code_execution" }],
  };

  test("are refused with 400 naming the tool and the setting, before any upstream call", async () => {
    upstream.clear();
    const { res } = await post("/v1/messages", body);
    expect(res.status).toBe(400);
    const error = ((await res.json()) as { error: { message: string } }).error;
    expect(error.message).toContain("tools[0]");
    expect(error.message).toContain('"code_execution_20250825"');
    expect(error.message).toContain("allow_unpriced = true");
    expect(upstream.requests.length).toBe(0);
  });

  test("are forwarded when the operator sets allow_unpriced", async () => {
    upstream.answer(() =>
      Response.json({
        id: "msg_2",
        type: "message",
        role: "assistant",
        model: "upstream-model",
        content: [{ type: "text", text: "Done." }],
        stop_reason: "end_turn",
        stop_sequence: null,
        usage: { input_tokens: 10, output_tokens: 2 },
      }),
    );
    const { res } = await post("/v1/messages", body, allowing);
    expect(res.status).toBe(200);
    expect((upstream.last().json as { tools: unknown }).tools).toEqual(body.tools);
  });
});

describe("modelgate usage", () => {
  test("totals each priced tool's calls from the stored records, in JSON, CSV and the table", async () => {
    await recordsOf("hosted-"); // the tests above have stored their records
    const stored = db.query("SELECT tool_calls FROM usage_records").all() as { tool_calls: string | null }[];
    const expected = { web_search: 0, file_search: 0, web_fetch: 0 };
    for (const { tool_calls } of stored) {
      const calls = JSON.parse(tool_calls ?? "{}") as Partial<typeof expected>;
      for (const tool of Object.keys(expected) as (keyof typeof expected)[])
        expected[tool] += calls[tool] ?? 0;
    }
    expect(expected.web_search).toBeGreaterThan(0);
    const json = await gw.cli(["usage", "--format", "json"]);
    expect(json.code).toBe(0);
    const [total] = JSON.parse(json.stdout) as Record<string, number>[];
    expect(total).toMatchObject({
      web_search_calls: expected.web_search,
      file_search_calls: expected.file_search,
      web_fetch_calls: expected.web_fetch,
    });
    const csv = await gw.cli(["usage", "--format", "csv"]);
    expect(csv.stdout.split("\r\n")[0]).toContain("web_search_calls,file_search_calls,web_fetch_calls");
    // The table shows only the tools that were called.
    const table = await gw.cli(["usage"]);
    expect(table.stdout).toContain("WEB_SEARCH_CALLS");
    expect(table.stdout).not.toContain("FILE_SEARCH_CALLS");
  });
});
