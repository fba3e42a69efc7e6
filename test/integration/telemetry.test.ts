// OpenTelemetry traces through the compiled gateway: an OTLP/HTTP receiver in the test, two
// recording upstreams (the first answers 500, so every request fails over to the second), and
// requests non-stream, streamed and refused. Asserts the span tree, the GenAI attributes, the
// `traceparent` sent upstream, and that no secret or prompt text reaches a span.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chatAnswer, chatChannelToml, chatStreamAnswer, postChat } from "../helpers/chat-rig.ts";
import { createKey, type RunningGateway, startGateway } from "../helpers/gateway.ts";
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "../helpers/otlp-receiver.ts";
import { type RecordingUpstream, startRecordingUpstream } from "../helpers/recording-upstream.ts";
import { keyAccepted } from "../helpers/wait.ts";

const MODEL = "modelx-5.4-mini";
const PROMPT = "a secret prompt about otters";
const CLIENT_TRACE = "0af7651916cd43dd8448eb211c80319c";
const CLIENT_PARENT = "b7ad6b7169203331";
/** The request span's children, by name, when the first channel fails and the second answers. */
const FAILED_OVER = ["admission", "settlement", "upstream broken", "upstream good"];

let receiver: OtlpReceiver;
let broken: RecordingUpstream;
let good: RecordingUpstream;
let gw: RunningGateway;

beforeAll(async () => {
  receiver = startOtlpReceiver();
  broken = startRecordingUpstream(() => Response.json({ error: { message: "boom" } }, { status: 500 }));
  good = startRecordingUpstream((request) =>
    (request.json as { stream?: boolean }).stream
      ? chatStreamAnswer("upstream-model-7", "Hi", { prompt_tokens: 9, completion_tokens: 2 })
      : chatAnswer("upstream-model-7", "Otters hold hands.", {
          prompt_tokens: 11,
          completion_tokens: 5,
          prompt_tokens_details: { cached_tokens: 3 },
        }),
  );
  const channel = (name: string, url: string, priority: number) =>
    chatChannelToml(name, url, MODEL, priority, "upstream-model-7");
  gw = await startGateway({
    config: `[bootstrap]\nbalance_usd = "100"\n[telemetry]\notlp_endpoint = "${receiver.url}"\nsampling_ratio = 1.0\n[aliases.models]\n"otter-chat" = "${MODEL}"\n[routing]\nbackoff_base_ms = 10\nbackoff_max_ms = 20\n${channel("broken", broken.url, 10)}${channel("good", good.url, 1)}`,
  });
});

afterAll(async () => {
  await gw?.dispose();
  await Promise.all([receiver?.stop(), broken?.stop(), good?.stop()]);
});

/** A new key, once the gateway's key cache has picked it up (it reloads every 250 ms). */
async function newKey(args: string[]): Promise<{ secret: string; id: string }> {
  const key = await createKey(gw, ["--account", "default", ...args]);
  await keyAccepted(gw.url, key.secret);
  return key;
}

function chat(secret: string, stream: boolean, headers: Record<string, string> = {}): Promise<Response> {
  return postChat(gw, secret, { model: MODEL, stream, content: PROMPT, maxTokens: 64, headers });
}

/** The spans of one trace, by name; children listed under their parent's id. */
function tree(spans: ReceivedSpan[], traceId: string) {
  const mine = spans.filter((s) => s.traceId === traceId);
  const root = mine.find((s) => s.name === "POST /v1/chat/completions");
  if (root === undefined) throw new Error(`no request span in trace ${traceId}`);
  const children = mine.filter((s) => s.parentSpanId === root.spanId);
  return { root, children, all: mine };
}

function requestSpanOf(spans: ReceivedSpan[], requestId: string): ReceivedSpan {
  const span = spans.find((s) => s.attributes["modelgate.request_id"] === requestId);
  if (span === undefined) throw new Error(`no span for ${requestId}`);
  return span;
}

describe("OpenTelemetry traces", () => {
  test("an aliased request: each attempt span names the model sent upstream, mapped from the catalog id", async () => {
    const key = await newKey(["--name", "alias-key"]);
    const response = await postChat(gw, key.secret, {
      model: "otter-chat",
      stream: false,
      content: PROMPT,
      maxTokens: 64,
    });
    expect(response.status).toBe(200);
    await response.arrayBuffer();
    const requestId = response.headers.get("x-request-id") ?? "";
    await receiver.waitFor((s) => s.attributes["modelgate.request_id"] === requestId, 1);
    const root = requestSpanOf(receiver.spans, requestId);
    const attempts = receiver.spans.filter(
      (s) => s.traceId === root.traceId && s.parentSpanId === root.spanId && s.name.startsWith("upstream "),
    );
    expect(attempts.map((a) => a.attributes["gen_ai.request.model"])).toEqual([
      "upstream-model-7",
      "upstream-model-7",
    ]);
    expect((good.last().json as { model: string }).model).toBe("upstream-model-7");
  });

  test("non-stream with a failover: request span, admission, two attempts, settlement, GenAI attributes", async () => {
    const key = await newKey(["--name", "tracer-key"]);
    const response = await chat(key.secret, false, {
      traceparent: `00-${CLIENT_TRACE}-${CLIENT_PARENT}-01`,
    });
    expect(response.status).toBe(200);
    const requestId = response.headers.get("x-request-id") ?? "";
    await receiver.waitFor((s) => s.attributes["modelgate.request_id"] === requestId, 1);
    const root = requestSpanOf(receiver.spans, requestId);
    // The client's trace is continued: same trace id, its span as parent.
    expect(root.traceId).toBe(CLIENT_TRACE);
    expect(root.parentSpanId).toBe(CLIENT_PARENT);
    expect(root.kind).toBe(2); // SERVER
    expect(root.resource["service.name"]).toBe("modelgate");
    const { children } = tree(receiver.spans, CLIENT_TRACE);
    expect(children.map((c) => c.name).sort()).toEqual(FAILED_OVER);
    expect(root.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.request.model": MODEL,
      "gen_ai.response.model": "upstream-model-7",
      "gen_ai.request.max_tokens": 64,
      "gen_ai.response.finish_reasons": ["stop"],
      "gen_ai.usage.input_tokens": 11,
      "gen_ai.usage.output_tokens": 5,
      "gen_ai.usage.cache_read.input_tokens": 3,
      "modelgate.key.name": "tracer-key",
      "modelgate.account.name": "default",
      "http.response.status_code": 200,
    });
    expect(root.attributes["modelgate.cost_usd"]).toBeGreaterThan(0);
    const first = children.find((c) => c.name === "upstream broken");
    const second = children.find((c) => c.name === "upstream good");
    expect(first?.kind).toBe(3); // CLIENT
    expect(first?.attributes).toMatchObject({
      "modelgate.channel": "broken",
      "modelgate.attempt": 1,
      "http.response.status_code": 500,
      "error.type": "upstream_failed",
      "gen_ai.request.model": "upstream-model-7",
    });
    expect(first?.statusCode).toBe(2);
    expect(second?.attributes).toMatchObject({
      "modelgate.channel": "good",
      "modelgate.attempt": 2,
      "http.response.status_code": 200,
      "modelgate.retry_reason": "upstream_failed (500)",
    });
    const settlement = children.find((c) => c.name === "settlement");
    expect(settlement?.attributes["gen_ai.usage.output_tokens"]).toBe(5);
    expect(settlement?.attributes["modelgate.cost_nanos"]).toBeGreaterThan(0);
    // Each upstream got its own attempt span as parent, in the client's trace.
    const sentBroken = broken.requests.at(-1)?.headers.traceparent;
    const sentGood = good.last().headers.traceparent;
    expect(sentBroken).toBe(`00-${CLIENT_TRACE}-${first?.spanId}-01`);
    expect(sentGood).toBe(`00-${CLIENT_TRACE}-${second?.spanId}-01`);
    // Neither the secret nor the prompt text is in any span.
    const text = JSON.stringify(receiver.spans);
    expect(text).not.toContain(key.secret);
    expect(text).not.toContain(PROMPT);
  });

  test("stream: the request span stays open until the stream is settled, with its usage", async () => {
    const key = await newKey(["--name", "streamer"]);
    const response = await chat(key.secret, true);
    expect(response.status).toBe(200);
    expect(await response.text()).toContain("[DONE]");
    const requestId = response.headers.get("x-request-id") ?? "";
    await receiver.waitFor((s) => s.attributes["modelgate.request_id"] === requestId, 1);
    const root = requestSpanOf(receiver.spans, requestId);
    expect(root.parentSpanId).toBe("");
    const { children } = tree(receiver.spans, root.traceId);
    expect(children.map((c) => c.name).sort()).toEqual(FAILED_OVER);
    expect(root.attributes).toMatchObject({
      "modelgate.stream": true,
      "gen_ai.response.finish_reasons": ["stop"],
      "gen_ai.usage.input_tokens": 9,
      "gen_ai.usage.output_tokens": 2,
      "modelgate.key.name": "streamer",
    });
  });

  test("a refusal: the admission span fails with its reason; no attempt is made", async () => {
    const key = await newKey(["--name", "one-rpm", "--rpm", "1"]);
    expect((await chat(key.secret, false)).status).toBe(200);
    const calls = good.requests.length;
    const refused = await chat(key.secret, false);
    expect(refused.status).toBe(429);
    expect(good.requests.length).toBe(calls);
    const requestId = refused.headers.get("x-request-id") ?? "";
    await receiver.waitFor((s) => s.attributes["modelgate.request_id"] === requestId, 1);
    const root = requestSpanOf(receiver.spans, requestId);
    expect(root.attributes["http.response.status_code"]).toBe(429);
    expect(root.attributes["error.type"]).toBe("rate_limited");
    await receiver.waitFor((s) => s.traceId === root.traceId && s.name === "admission", 1);
    const { children } = tree(receiver.spans, root.traceId);
    expect(children.map((c) => c.name)).toEqual(["admission"]);
    expect(children[0]?.attributes["modelgate.refusal"]).toBe("rate_limit_exceeded");
    expect(children[0]?.statusCode).toBe(2);
  });
});
