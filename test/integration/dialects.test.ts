// The compiled gateway relaying each SSE dialect real servers write (test/helpers/sse-dialects.ts),
// replayed by a recording upstream for Chat (openai-chat), Responses (openai-responses) and
// Messages (anthropic) channels, in 7-byte slices and whole: the client's text arrives intact and
// the stored usage record holds the upstream's exact token counts, marked `reported`, never
// `estimated`. Also: the Chat include-usage chunk reaches only the clients that asked for it, and an
// Anthropic upstream's cache writes are billed at the write prices.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type RunningGateway, startGateway } from "../helpers/gateway.ts";
import { byteSlices, type RecordingUpstream, startRecordingUpstream } from "../helpers/recording-upstream.ts";
import {
  BASE,
  chatStream,
  clientView,
  DIALECTS,
  messagesStream,
  REPORTED,
  STREAMS,
  TEXT,
} from "../helpers/sse-dialects.ts";
import { flushUsage } from "../helpers/usage-records.ts";

type Protocol = "chat" | "responses" | "messages";

const MODEL: Record<Protocol, string> = {
  chat: "modelx-5.2",
  responses: "modelx-5.4",
  messages: "modelz-sonnet-4-6",
};

const PATH: Record<Protocol, string> = {
  chat: "/v1/chat/completions",
  responses: "/v1/responses",
  messages: "/v1/messages",
};

let upstream: RecordingUpstream;
let gw: RunningGateway;
let db: Database;
let seq = 0;

beforeAll(async () => {
  upstream = startRecordingUpstream(() => new Response("no script", { status: 500 }));
  gw = await startGateway({
    config: `
[routing]
max_attempts = 1

[[channels]]
kind = "openai-chat"
name = "up-chat"
base_url = "${upstream.url}/v1"
models = ["${MODEL.chat}"]

[[channels]]
kind = "openai-responses"
name = "up-responses"
base_url = "${upstream.url}/v1"
models = ["${MODEL.responses}"]

[[channels]]
kind = "anthropic"
name = "up-messages"
base_url = "${upstream.url}"
models = ["${MODEL.messages}"]
`,
  });
  db = new Database(gw.dbUrl.replace(/^sqlite:\/\//, ""), { readonly: true });
});

afterAll(async () => {
  db.close();
  await gw.dispose();
  await upstream.stop();
});

interface StoredRecord {
  input_tokens: number;
  cached_input_tokens: number;
  cache_write_tokens: number;
  cache_write_1h_tokens: number;
  output_tokens: number;
  usage_source: string;
  cost_nanos: number;
  status: number;
}

/** The request's usage record, once the gateway's writer has stored it. */
async function recordOf(requestId: string): Promise<StoredRecord> {
  const query = db.query("SELECT * FROM usage_records WHERE request_id = ?");
  for (let i = 0; i < 500; i++) {
    await flushUsage(gw);
    const row = query.get(requestId) as StoredRecord | null;
    if (row) return row;
    await Bun.sleep(20);
  }
  throw new Error(`no usage record for ${requestId}`);
}

function body(protocol: Protocol, model: string, extra: Record<string, unknown>): Record<string, unknown> {
  if (protocol === "responses") return { model, input: "Say hello.", stream: true, ...extra };
  if (protocol === "messages")
    return {
      model,
      max_tokens: 200,
      messages: [{ role: "user", content: "Say hello." }],
      stream: true,
      ...extra,
    };
  return { model, messages: [{ role: "user", content: "Say hello." }], stream: true, ...extra };
}

/**
 * Replays `stream` in `slice`-byte pieces and sends one streamed request in `protocol` for the model
 * of the `upstream` channel (another protocol: the gateway translates); returns what the client read.
 */
async function replay(
  protocol: Protocol,
  stream: string,
  slice: number,
  extra: Record<string, unknown> = {},
  upstreamProtocol: Protocol = protocol,
) {
  upstream.answer(() => ({ chunks: byteSlices(stream, slice) }));
  const requestId = `dialect-${process.pid}-${++seq}`;
  const res = await fetch(`${gw.url}${PATH[protocol]}`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${gw.key}`,
      "content-type": "application/json",
      "x-request-id": requestId,
      ...(protocol === "messages" ? { "anthropic-version": "2023-06-01" } : {}),
    },
    body: JSON.stringify(body(protocol, MODEL[upstreamProtocol], extra)),
  });
  expect(res.status).toBe(200);
  expect(res.headers.get("x-client-request-id")).toBe(requestId);
  const raw = await res.text();
  // The gateway's own id keys the usage record.
  return { raw, requestId: res.headers.get("x-request-id") ?? "", ...clientView(protocol, raw) };
}

describe("every dialect is relayed intact and billed exactly", () => {
  for (const protocol of ["chat", "responses", "messages"] as const) {
    for (const dialect of DIALECTS) {
      for (const slice of [7, 1 << 16]) {
        test(`${protocol}: ${dialect.name}, ${slice === 7 ? "7-byte slices" : "whole"}`, async () => {
          const got = await replay(protocol, STREAMS[protocol](dialect), slice);
          expect(got.text).toBe(TEXT);
          expect(got.errors).toBe(0);
          const record = await recordOf(got.requestId);
          expect(record.usage_source).toBe("reported");
          expect(record.input_tokens).toBe(REPORTED.input);
          expect(record.cached_input_tokens).toBe(REPORTED.cached);
          expect(record.output_tokens).toBe(REPORTED.output);
          expect(record.status).toBe(200);
        });
      }
    }
  }
});

describe("translated streams take the upstream's exact usage in every dialect", () => {
  const tricky = DIALECTS.filter((d) => d.eol === "\r" || d.json !== "compact" || !d.done || !d.eventLines);
  for (const upstreamProtocol of ["chat", "responses", "messages"] as const) {
    for (const client of (["chat", "responses", "messages"] as const).filter((c) => c !== upstreamProtocol)) {
      test(`${upstreamProtocol} upstream → ${client} client`, async () => {
        for (const dialect of tricky) {
          const got = await replay(client, STREAMS[upstreamProtocol](dialect), 7, {}, upstreamProtocol);
          expect([dialect.name, got.text]).toEqual([dialect.name, TEXT]);
          expect(got.errors).toBe(0);
          const record = await recordOf(got.requestId);
          expect([dialect.name, record.usage_source, record.input_tokens, record.output_tokens]).toEqual([
            dialect.name,
            "reported",
            REPORTED.input,
            REPORTED.output,
          ]);
          expect(record.cached_input_tokens).toBe(REPORTED.cached);
        }
      });
    }
  }
});

describe("the Chat include-usage chunk", () => {
  test("the gateway asks for it, and a client that did not never sees it", async () => {
    for (const dialect of DIALECTS.filter((d) => d.usage === "separate")) {
      const stream = chatStream(dialect);
      const got = await replay("chat", stream, 7);
      const sent = upstream.last().json as { stream_options?: { include_usage?: boolean } };
      expect(sent.stream_options?.include_usage).toBe(true);
      expect(got.usageChunks).toBe(0);
      expect(got.text).toBe(TEXT);
      expect((await recordOf(got.requestId)).usage_source).toBe("reported");
    }
  });

  test("a client that asked for it gets it, and the upstream's bytes unchanged", async () => {
    for (const dialect of [BASE, ...DIALECTS.filter((d) => d.json !== "compact" || d.eol !== "\n")]) {
      const stream = chatStream(dialect);
      const got = await replay("chat", stream, 7, { stream_options: { include_usage: true } });
      // The upstream's bytes, then the gateway's own last line: the settled cost as an SSE comment.
      expect(got.raw).toMatch(/: x-modelgate-cost-usd \d+\.\d+\n\n$/);
      expect(got.raw.slice(0, got.raw.lastIndexOf(": x-modelgate-cost-usd"))).toBe(stream);
      expect(got.usageChunks).toBe(dialect.usage === "separate" ? 1 : 0);
    }
  });
});

/** An Anthropic usage with cache reads and writes of both lifetimes (billed as modelz-sonnet-4-6). */
const CACHE_USAGE = {
  input_tokens: 10,
  cache_read_input_tokens: 200,
  cache_creation_input_tokens: 1000,
  cache_creation: { ephemeral_5m_input_tokens: 600, ephemeral_1h_input_tokens: 400 },
};

describe("Anthropic cache writes", () => {
  test.each(["messages", "chat", "responses"] as const)(
    "5-minute and 1-hour writes are billed at their write prices (%s client)",
    async (client) => {
      const stream = messagesStream({ ...BASE, json: "spaced" }, CACHE_USAGE);
      const got = await replay(client, stream, 7, {}, "messages");
      expect(got.text).toBe(TEXT);
      expectCacheWritesBilled(await recordOf(got.requestId));
    },
  );

  test("a non-stream answer's cache writes too", async () => {
    const answer = {
      id: "msg_1",
      type: "message",
      role: "assistant",
      model: "upstream-model",
      content: [{ type: "text", text: TEXT }],
      stop_reason: "end_turn",
      stop_sequence: null,
      usage: { ...CACHE_USAGE, output_tokens: REPORTED.output },
    };
    upstream.answer(() => Response.json(answer));
    const requestId = `dialect-${process.pid}-${++seq}`;
    const res = await fetch(`${gw.url}/v1/messages`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${gw.key}`,
        "content-type": "application/json",
        "x-request-id": requestId,
        "anthropic-version": "2023-06-01",
      },
      body: JSON.stringify({ ...body("messages", MODEL.messages, {}), stream: false }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { content: { text: string }[] }).content[0]?.text).toBe(TEXT);
    expectCacheWritesBilled(await recordOf(res.headers.get("x-request-id") ?? requestId));
  });
});

/** At the modelz-sonnet-4-6 defaults (USD/Mtok): input 0.30, cache read 0.03, 5-minute write 0.375
 * (1.25x), 1-hour write 0.60 (2x), output 1.20. */
function expectCacheWritesBilled(record: StoredRecord) {
  expect(record.usage_source).toBe("reported");
  expect(record.input_tokens).toBe(1210);
  expect(record.cached_input_tokens).toBe(200);
  expect(record.cache_write_tokens).toBe(600);
  expect(record.cache_write_1h_tokens).toBe(400);
  // (10 × 0.30 + 200 × 0.03 + 600 × 0.375 + 400 × 0.60 + 11 × 1.20) USD per million tokens
  // = 3 + 6 + 225 + 240 + 13.2 = 487.2e-6 USD = 487,200 nano-USD (as plain input: 376,200).
  expect(record.cost_nanos).toBe(487_200);
}
