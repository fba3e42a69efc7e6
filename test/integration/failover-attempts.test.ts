// A failover that fails everywhere, through the compiled gateway: three channels per endpoint
// family (text, images, embeddings), each answering 500, so the request makes three attempts and
// fails. The client's error, the access-log line and the request's span each name all three
// attempts (channel, upstream kind, status) — not only the last one — and the status is what the
// last attempt gave (502, as a single failed attempt gives).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type RunningGateway, startGateway } from "../helpers/gateway.ts";
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "../helpers/otlp-receiver.ts";
import { type RecordingUpstream, startRecordingUpstream } from "../helpers/recording-upstream.ts";
import { waitFor } from "../helpers/wait.ts";

const TEXT = "modelx-5.4-mini";
const EMBED = "modelx-embed-3-small";
const IMAGE = "modelx-image-1.5";
const NAMES = ["first", "second", "third"];

let receiver: OtlpReceiver;
let upstream: RecordingUpstream;
let gw: RunningGateway;

function channels(kind: string, prefix: string, models: string[]): string {
  return NAMES.map(
    (name, i) =>
      `[[channels]]\nkind = "${kind}"\nname = "${prefix}-${name}"\nbase_url = "${upstream.url}/v1"\nmodels = ${JSON.stringify(models)}\npriority = ${10 - i}\nretries = 0\n`,
  ).join("");
}

beforeAll(async () => {
  receiver = startOtlpReceiver();
  upstream = startRecordingUpstream(() =>
    Response.json({ error: { message: "the upstream is down" } }, { status: 500 }),
  );
  gw = await startGateway({
    config: `[bootstrap]\nbalance_usd = "100"\n[telemetry]\notlp_endpoint = "${receiver.url}"\nsampling_ratio = 1.0\n[routing]\nmax_attempts = 3\nbackoff_base_ms = 10\nbackoff_max_ms = 20\n${channels("openai-chat", "chat", [TEXT, EMBED])}${channels("openai-images", "img", [IMAGE])}`,
  });
}, 30_000);

afterAll(async () => {
  await gw?.dispose();
  await Promise.all([receiver?.stop(), upstream?.stop()]);
});

function post(path: string, body: Record<string, unknown>): Promise<Response> {
  return fetch(`${gw.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${gw.key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

type Line = Record<string, unknown>;

/** The access-log line of `requestId`, once written. */
function accessLine(requestId: string): Promise<Line> {
  return waitFor(`the access line of ${requestId}`, () =>
    gw
      .logs()
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Line)
      .find((l) => l.msg === "request" && l.request_id === requestId),
  );
}

/** Checks what the client, the access log and the span say of a request that failed on all three channels. */
async function allThreeNamed(response: Response, prefix: string, upstreamKind: string): Promise<void> {
  expect(response.status).toBe(502);
  const body = (await response.json()) as { error: { message: string; code: string } };
  expect(body.error.code).toBe("upstream_failed");
  expect(body.error.message).toContain("All 3 attempts failed");
  for (const name of NAMES)
    expect(body.error.message).toContain(`channel "${prefix}-${name}" (${upstreamKind}) 500`);
  const requestId = response.headers.get("x-request-id") ?? "";

  const line = await accessLine(requestId);
  const attempts = line.attempts as {
    channel: string;
    upstream: string;
    status: number;
    kind: string;
    at: string;
  }[];
  expect(attempts.map((a) => [a.channel, a.upstream, a.status, a.kind])).toEqual(
    NAMES.map((name) => [`${prefix}-${name}`, upstreamKind, 500, "upstream_failed"]),
  );
  for (const a of attempts) expect(Number.isNaN(Date.parse(a.at))).toBe(false);
  // Logged once: no other line of this request lists the attempts.
  const mentions = gw
    .logs()
    .split("\n")
    .filter((l) => l.includes(requestId) && l.includes('"attempts"'));
  expect(mentions).toHaveLength(1);

  const isRequest = (s: ReceivedSpan) => s.attributes["modelgate.request_id"] === requestId;
  await receiver.waitFor(isRequest, 1);
  const span = receiver.spans.find(isRequest);
  const named = span?.attributes["modelgate.attempts"] as string[];
  expect(named).toHaveLength(3);
  NAMES.forEach((name, i) => {
    expect(named[i]).toStartWith(
      `${i + 1}. channel "${prefix}-${name}" (${upstreamKind}) 500 upstream_failed`,
    );
  });
}

describe("a failover over three failing channels names every attempt", () => {
  test("text", async () => {
    const response = await post("/v1/chat/completions", {
      model: TEXT,
      messages: [{ role: "user", content: "hello" }],
      max_tokens: 16,
    });
    await allThreeNamed(response, "chat", "openai-chat");
  }, 30_000);

  test("images", async () => {
    const response = await post("/v1/images/generations", { model: IMAGE, prompt: "a kite", size: "48x48" });
    await allThreeNamed(response, "img", "openai-images");
  }, 30_000);

  test("embeddings", async () => {
    const response = await post("/v1/embeddings", { model: EMBED, input: "hello" });
    await allThreeNamed(response, "chat", "openai-chat");
  }, 30_000);
});
