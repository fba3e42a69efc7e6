// A cut stream is billed for what was delivered, never a provisional figure: the compiled gateway,
// for every client protocol (Responses, Chat, Messages) × upstream kind (openai-chat,
// openai-responses and anthropic replayed by a recording upstream; the in-process simulator) ×
// where the stream was cut (the client going away after 20 deltas, the upstream dropping
// mid-stream, a stream of reasoning deltas only). Each usage record says `counted`, bills at least
// the tokens of what was delivered (and more than Anthropic's provisional `output_tokens: 1`),
// never more than the reservation's output cap, and takes the upstream's input figure when it sent
// one (Anthropic's `message_start`, final for input). A complete answer that reports no usage is
// billed its text, counted, the same way. Also a fast-check property: random scripted
// streams cut at random points bill at least what was delivered, at most the cap, once each.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { countTokens } from "../../src/catalog/tokenizer.ts";
import { type RunningGateway, startGateway } from "../helpers/gateway.ts";
import { type RecordingUpstream, startRecordingUpstream } from "../helpers/recording-upstream.ts";
import {
  answerWithoutUsage,
  clientDeltas,
  type Protocol,
  type Script,
  scriptedResponse,
  sentPieces,
} from "../helpers/scripted-streams.ts";
import { recordsOf } from "../helpers/usage-records.ts";

type Kind = "openai-chat" | "openai-responses" | "anthropic" | "sim";
type Cut = "client disconnect" | "upstream drop" | "thinking only";

const CLIENTS: readonly Protocol[] = ["responses", "chat", "messages"];
const KINDS: readonly Kind[] = ["openai-chat", "openai-responses", "anthropic", "sim"];
const CUTS: readonly Cut[] = ["client disconnect", "upstream drop", "thinking only"];

/** The public model each kind's channel serves (any client protocol may call any of them). */
const MODEL: Record<Kind, string> = {
  "openai-chat": "modelx-5.2",
  "openai-responses": "modelx-5.4",
  anthropic: "modelz-sonnet-4-6",
  sim: "modelx-5.4-mini",
};

/** The protocol each recording kind speaks. */
const SPEAKS: Record<Exclude<Kind, "sim">, Protocol> = {
  "openai-chat": "chat",
  "openai-responses": "responses",
  anthropic: "messages",
};

const PATH: Record<Protocol, string> = {
  chat: "/v1/chat/completions",
  responses: "/v1/responses",
  messages: "/v1/messages",
};

const MAX_TOKENS = 4000;
/** Anthropic's input figure in the scripted `message_start`. */
const UPSTREAM_INPUT = 37;
/** One-token words (o200k), so a count of pieces is near a count of tokens. */
const WORDS = [" the", " quick", " brown", " fox", " jumps", " over", " lazy", " dog", " and", " runs"];
const pieces = (n: number) => Array.from({ length: n }, (_, i) => WORDS[i % WORDS.length] as string);

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
models = ["${MODEL["openai-chat"]}"]

[[channels]]
kind = "openai-responses"
name = "up-responses"
base_url = "${upstream.url}/v1"
models = ["${MODEL["openai-responses"]}"]

[[channels]]
kind = "anthropic"
name = "up-messages"
base_url = "${upstream.url}"
models = ["${MODEL.anthropic}"]

[[channels]]
kind = "sim"
name = "sim"
models = ["${MODEL.sim}"]
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
  output_tokens: number;
  usage_source: string;
  status: number;
}

/** The request's usage records (waited for). */
function storedRecords(requestId: string): Promise<StoredRecord[]> {
  return recordsOf<StoredRecord>(db, requestId, "*", "exact", gw);
}

function requestBody(client: Protocol, model: string, prompt: string, thinking: boolean, max = MAX_TOKENS) {
  const messages = [{ role: "user", content: prompt }];
  switch (client) {
    case "responses":
      return {
        model,
        input: prompt,
        stream: true,
        max_output_tokens: max,
        ...(thinking ? { reasoning: { effort: "high", summary: "auto" } } : {}),
      };
    case "chat":
      return { model, messages, stream: true, max_tokens: max };
    case "messages":
      return {
        model,
        messages,
        stream: true,
        max_tokens: max,
        ...(thinking ? { thinking: { type: "enabled", budget_tokens: 1024 } } : {}),
      };
  }
}

/** POSTs `body` to the client protocol's path under `requestId`. */
function post(client: Protocol, body: unknown, requestId: string, signal?: AbortSignal): Promise<Response> {
  return fetch(`${gw.url}${PATH[client]}`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${gw.key}`,
      "content-type": "application/json",
      "x-request-id": requestId,
      ...(client === "messages" ? { "anthropic-version": "2023-06-01" } : {}),
    },
    body: JSON.stringify(body),
    signal: signal ?? null,
  });
}

interface Sent {
  requestId: string;
  seen: ReturnType<typeof clientDeltas>["seen"];
}

/**
 * Sends one streamed request and reads it as a client does: to its end, or until `stopAfter`
 * deltas arrived, then goes away (the reader is cancelled, the connection closed).
 */
async function send(client: Protocol, body: unknown, stopAfter?: number): Promise<Sent> {
  const requestId = `cut-${process.pid}-${++seq}`;
  const abort = new AbortController();
  const res = await post(client, body, requestId, abort.signal);
  expect(res.status).toBe(200);
  const reader = clientDeltas(client);
  const stream = res.body?.getReader();
  if (stream === undefined) throw new Error("no body");
  const decoder = new TextDecoder();
  for (;;) {
    if (stopAfter !== undefined && reader.seen.deltas >= stopAfter) {
      await stream.cancel();
      abort.abort();
      break;
    }
    const { value, done } = await stream.read();
    if (done) break;
    reader.feed(decoder.decode(value, { stream: true }));
  }
  return { requestId, seen: reader.seen };
}

/** The one record of a cut stream: counted, at least `delivered` tokens, within the cap. */
async function expectCounted(requestId: string, delivered: string, cap = MAX_TOKENS): Promise<StoredRecord> {
  const records = await storedRecords(requestId);
  expect(records).toHaveLength(1);
  const record = records[0] as StoredRecord;
  expect(record.status).toBe(200);
  expect(record.usage_source).toBe("counted");
  expect(record.output_tokens).toBeGreaterThanOrEqual(Math.min(countTokens(delivered), cap));
  expect(record.output_tokens).toBeLessThanOrEqual(cap);
  return record;
}

/** A recording kind's case: the upstream's script, the client's cut, what must be billed. */
async function recordedCase(client: Protocol, kind: Exclude<Kind, "sim">, cut: Cut): Promise<void> {
  const thinking = cut === "thinking only";
  // Thinking is never shown to a Chat client (the translation drops it): the upstream goes instead.
  const clientCuts = cut === "client disconnect" || (thinking && client !== "chat");
  const script: Script = {
    pieces: pieces(thinking ? 300 : 40),
    thinking,
    end: clientCuts ? "hold" : "drop",
    input: UPSTREAM_INPUT,
    output: 0,
  };
  upstream.answer(() => scriptedResponse(SPEAKS[kind], script));
  const stopAfter = clientCuts ? (thinking ? 300 : 20) : undefined;
  const got = await send(client, requestBody(client, MODEL[kind], "Tell me a story.", thinking), stopAfter);
  if (stopAfter !== undefined) expect(got.seen.deltas).toBeGreaterThanOrEqual(stopAfter);
  else expect(got.seen.errors).toBe(1);
  // What the gateway surely had: what its client read, and all the upstream sent when it dropped.
  const delivered = clientCuts ? got.seen.text : sentPieces(script).join("");
  const record = await expectCounted(got.requestId, delivered);
  expect(record.output_tokens).toBeGreaterThan(1);
  // Anthropic's message_start input is final for input; the others sent none before the cut.
  if (kind === "anthropic") expect(record.input_tokens).toBe(UPSTREAM_INPUT);
  else expect(record.input_tokens).toBe(countTokens("Tell me a story."));
}

/** A simulator case, cut by the simulator's own directives (`sim:drop`, `sim:tps`). */
async function simCase(client: Protocol, cut: Cut): Promise<void> {
  const thinking = cut === "thinking only";
  const directive = cut === "client disconnect" ? "sim:tps=50" : thinking ? "sim:drop=30" : "sim:drop=25";
  const prompt = `Tell me a long story. ${directive}`;
  const stopAfter = cut === "client disconnect" ? 20 : undefined;
  const got = await send(client, requestBody(client, MODEL.sim, prompt, thinking), stopAfter);
  if (stopAfter === undefined) {
    expect(got.seen.errors).toBe(1);
    expect(got.seen.deltas).toBe(thinking ? 30 : 25);
  } else expect(got.seen.deltas).toBeGreaterThanOrEqual(stopAfter);
  const record = await expectCounted(got.requestId, got.seen.text);
  expect(record.output_tokens).toBeGreaterThanOrEqual(stopAfter ?? (thinking ? 30 : 25));
}

describe("a cut stream is billed what was delivered, counted (client × upstream kind × cut)", () => {
  for (const client of CLIENTS) {
    for (const kind of KINDS) {
      for (const cut of CUTS) {
        // The simulator's Chat answers carry reasoning as a count only, never as text to deliver.
        if (kind === "sim" && client === "chat" && cut === "thinking only") continue;
        test(`${client} client, ${kind} upstream, ${cut}`, async () => {
          if (kind === "sim") await simCase(client, cut);
          else await recordedCase(client, kind, cut);
        });
      }
    }
  }
});

describe("an uncut stream still bills the upstream's final usage exactly", () => {
  for (const client of CLIENTS) {
    for (const kind of ["openai-chat", "openai-responses", "anthropic"] as const) {
      test(`${client} client, ${kind} upstream`, async () => {
        const script: Script = { pieces: pieces(40), thinking: false, end: "complete", input: 21, output: 7 };
        upstream.answer(() => scriptedResponse(SPEAKS[kind], script));
        const got = await send(client, requestBody(client, MODEL[kind], "Tell me a story.", false));
        expect(got.seen.errors).toBe(0);
        const records = await storedRecords(got.requestId);
        expect(records.map((r) => [r.usage_source, r.input_tokens, r.output_tokens])).toEqual([
          ["reported", 21, 7],
        ]);
      });
    }
  }
});

describe("a complete answer whose upstream reports no usage is billed its text, counted", () => {
  const text = "A short answer, with a comma — and a dash; Grüße aus 世界.";
  for (const client of CLIENTS) {
    for (const kind of ["openai-chat", "openai-responses", "anthropic"] as const) {
      test(`${client} client, ${kind} upstream`, async () => {
        upstream.answer(() => answerWithoutUsage(SPEAKS[kind], text));
        const requestId = `cut-${process.pid}-${++seq}`;
        const body = { ...requestBody(client, MODEL[kind], "Tell me a story.", false), stream: false };
        const res = await post(client, body, requestId);
        expect(res.status).toBe(200);
        const records = await storedRecords(requestId);
        expect(records.map((r) => [r.usage_source, r.input_tokens, r.output_tokens])).toEqual([
          ["counted", countTokens("Tell me a story."), countTokens(text)],
        ]);
      });
    }
  }
});

describe("property: random scripted streams cut at random points", () => {
  const piece = fc.oneof(
    fc.constantFrom(...WORDS),
    fc.string({ minLength: 1, maxLength: 6 }),
    fc.constantFrom(" Grüße", " 世界", " 🌍", "\n", '{"a":'),
  );
  const arbitrary = fc.record({
    upstream: fc.constantFrom("chat", "responses", "messages") as fc.Arbitrary<Protocol>,
    client: fc.constantFrom(...CLIENTS),
    pieces: fc.array(piece, { minLength: 1, maxLength: 60 }),
    thinking: fc.boolean(),
    cutAt: fc.nat(),
    end: fc.constantFrom("complete", "drop") as fc.Arbitrary<"complete" | "drop">,
    maxTokens: fc.integer({ min: 1, max: 120 }),
  });
  const kindOf: Record<Protocol, Exclude<Kind, "sim">> = {
    chat: "openai-chat",
    responses: "openai-responses",
    messages: "anthropic",
  };

  test("billed output ≥ delivered and ≤ the reservation's output cap, one record per request", async () => {
    const sent: string[] = [];
    await fc.assert(
      fc.asyncProperty(arbitrary, async (c) => {
        const cutAt = c.end === "complete" ? undefined : c.cutAt % (c.pieces.length + 1);
        const script: Script = {
          pieces: c.pieces,
          thinking: c.thinking,
          cutAt,
          end: c.end,
          input: 9,
          output: 5,
        };
        upstream.answer(() => scriptedResponse(c.upstream, script));
        const body = requestBody(c.client, MODEL[kindOf[c.upstream]], "Go.", false, c.maxTokens);
        const got = await send(c.client, body);
        sent.push(got.requestId);
        // The reservation's output cap: the client's cap, at least the 16 a Responses upstream may raise it to.
        const cap = Math.max(c.maxTokens, 16);
        if (c.end === "complete") {
          const records = await storedRecords(got.requestId);
          expect(records.map((r) => [r.usage_source, r.output_tokens])).toEqual([["reported", 5]]);
        } else await expectCounted(got.requestId, sentPieces(script).join(""), cap);
      }),
      { seed: 25_001, numRuns: 30 },
    );
    const marks = sent.map(() => "?").join(", ");
    const count = db.query(`SELECT COUNT(*) AS n FROM usage_records WHERE client_request_id IN (${marks})`);
    expect(sent.length).toBe(30);
    expect((count.get(...sent) as { n: number }).n).toBe(30);
  });
});
