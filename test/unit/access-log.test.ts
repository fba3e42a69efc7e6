// The access log's bookkeeping without a server: one line per request whichever of the edge and
// the settlement comes last, a refused admission written by the edge with its model, unbilled API
// requests on the feed, and nothing kept once a line is written (or for an upgrade that never
// reaches an edge end).
import { afterAll, beforeAll, beforeEach, expect, test } from "bun:test";
import type { Principal } from "../../src/auth/keys.ts";
import { setLogFormat } from "../../src/base/log.ts";
import { nanos } from "../../src/base/money.ts";
import { type Admission, type Meter, NO_USAGE, type Settlement } from "../../src/billing/contract.ts";
import { type UsageEvent, UsageFeed } from "../../src/billing/feed.ts";
import { findModel } from "../../src/catalog/models.ts";
import type { Gateway } from "../../src/gateway.ts";
import { loggedMeter, pathOf, pendingLines, requestEnded } from "../../src/http/access-log.ts";
import type { RequestContext } from "../../src/http/context.ts";
import { TrafficMetrics } from "../../src/metrics/traffic.ts";
import { GatewayError } from "../../src/wire/errors.ts";
import { acct, kid } from "../helpers/ids.ts";

const written: Record<string, unknown>[] = [];
const originalWrite = process.stderr.write.bind(process.stderr);
beforeAll(() => {
  setLogFormat("json");
  process.stderr.write = ((chunk: string) => {
    written.push(JSON.parse(chunk) as Record<string, unknown>);
    return true;
  }) as typeof process.stderr.write;
});
afterAll(() => {
  process.stderr.write = originalWrite;
});

const feed = new UsageFeed();
const published: UsageEvent[] = [];
feed.subscribe((e) => published.push(e));
const gateway = { feed } as unknown as Gateway;
const principal = { keyId: kid("key_1"), keyName: "ci-bot", accountId: acct(7) } as Principal;
const model = findModel("modelx-5.5");
if (!model) throw new Error("modelx-5.5 left the catalog");

beforeEach(() => {
  written.length = 0;
  published.length = 0;
});

function context(id: string, path = "/v1/chat/completions"): RequestContext {
  return {
    request: new Request(`http://gw:8080${path}?x=1`, { method: "POST" }),
    requestId: id,
    client: undefined,
    startedAt: performance.now(),
    protocol: "openai",
    route: path,
    upstreamMs: 0,
  };
}

/** A meter that admits (or refuses with a 429) and settles at once. */
function meter(refuse = false): Meter {
  return {
    admit: async () => {
      if (refuse) throw new GatewayError("rate_limited", "slow down", { code: "rate_limit_exceeded" });
      return { headers: {}, settle: async () => nanos(0) } satisfies Admission;
    },
  };
}

const settlement: Settlement = {
  status: 200,
  usage: { ...NO_USAGE, inputTokens: 11, outputTokens: 22 },
  source: "reported",
  channels: ["a", "b"],
};

function admit(m: Meter, ctx: RequestContext) {
  return m.admit({
    requestId: ctx.requestId,
    principal,
    model: model as NonNullable<typeof model>,
    endpoint: "/v1/chat/completions",
    method: "POST",
    stream: false,
    worstCase: { kind: "text", inputTokens: 1, maxOutputTokens: 1 },
  });
}

test("settled before the edge ends (non-stream): the edge writes one line with the tokens", async () => {
  const ctx = context("r-nonstream");
  ctx.principal = principal;
  const admission = await admit(loggedMeter(meter()), ctx);
  await admission.settle(settlement);
  requestEnded(ctx, gateway, new Response("{}"));
  expect(written).toEqual([
    expect.objectContaining({
      msg: "request",
      request_id: "r-nonstream",
      path: "/v1/chat/completions",
      status: 200,
      key: "ci-bot",
      model: "modelx-5.5",
      channel: "a,b",
      input_tokens: 11,
      output_tokens: 22,
    }),
  ]);
  expect(published).toEqual([]); // billed: the meter publishes it, not the access log
  expect(pendingLines()).toBe(0);
});

test("the edge ends first (a stream): the settlement writes the line, once", async () => {
  const ctx = context("r-stream");
  ctx.principal = principal;
  const admission = await admit(loggedMeter(meter()), ctx);
  requestEnded(ctx, gateway, new Response("data: …"));
  expect(written).toEqual([]);
  expect(pendingLines()).toBe(1);
  await admission.settle(settlement);
  await admission.settle(settlement);
  expect(written).toHaveLength(1);
  expect(written[0]).toMatchObject({ request_id: "r-stream", output_tokens: 22, status: 200 });
  expect(pendingLines()).toBe(0);
});

test("a refused admission: the edge writes it with key, model and code, and puts it on the feed", async () => {
  const ctx = context("r-429");
  ctx.principal = principal;
  const thrown = await admit(loggedMeter(meter(true)), ctx).catch((e: unknown) => e);
  requestEnded(ctx, gateway, new Response("{}", { status: 429 }), thrown);
  expect(written[0]).toMatchObject({
    status: 429,
    code: "rate_limit_exceeded",
    key: "ci-bot",
    model: "modelx-5.5",
  });
  expect(published).toEqual([
    expect.objectContaining({ requestId: "r-429", keyId: "key_1", accountId: 7, status: 429, costNanos: 0 }),
  ]);
  expect(published[0]?.errorCode).toBe("rate_limit_exceeded");
  expect(pendingLines()).toBe(0);
});

test("a request with no key: line and feed event without key or model; probes stay off the feed", () => {
  const refused = context("r-401");
  requestEnded(
    refused,
    gateway,
    new Response("{}", { status: 401 }),
    new GatewayError("invalid_api_key", "no key"),
  );
  expect(written[0]).toMatchObject({ status: 401, code: "invalid_api_key" });
  expect(written[0]).not.toHaveProperty("key");
  expect(published[0]).toMatchObject({ keyName: "", model: "", errorCode: "invalid_api_key" });
  requestEnded(context("r-probe", "/healthz"), gateway, new Response("ok"));
  expect(written).toHaveLength(2);
  expect(published).toHaveLength(1);
});

test("unbilled requests on the feed are not counted as settlements, tokens or cost in /metrics", async () => {
  const traffic = new TrafficMetrics(1, { circuits: () => [], journalBacklog: () => 0 });
  const unsubscribe = feed.subscribe((e) => traffic.settled(e));
  try {
    requestEnded(
      context("r-anon"),
      gateway,
      new Response("{}", { status: 401 }),
      new GatewayError("invalid_api_key", "no key"),
    );
    const listing = context("r-list", "/v1/models");
    listing.principal = principal;
    requestEnded(listing, gateway, new Response("{}"));
    const refused = context("r-429b");
    refused.principal = principal;
    const thrown = await admit(loggedMeter(meter(true)), refused).catch((e: unknown) => e);
    requestEnded(refused, gateway, new Response("{}", { status: 429 }), thrown);
    expect(published).toHaveLength(3);
    const lines: string[] = [];
    traffic.render(lines);
    expect(
      lines.filter(
        (l) =>
          !l.startsWith("#") &&
          !l.startsWith("modelgate_usage_journal") &&
          !l.startsWith("modelgate_limiter_"),
      ),
    ).toEqual([]);
    // The one key label slot is still free for the first key that settles.
    const { unbilled: _refused, ...billed } = published[2] as UsageEvent;
    traffic.settled({ ...billed, keyName: "payer", inputTokens: 5 });
    const after: string[] = [];
    traffic.render(after);
    expect(after).toContain(
      'modelgate_tokens_total{model="modelx-5.5",key="payer",channel="none",type="input"} 5',
    );
  } finally {
    unsubscribe();
  }
});

test("a settlement that fails still writes the line and leaves no note behind", async () => {
  const failing: Meter = {
    admit: async () => ({
      headers: {},
      settle: async () => {
        throw new Error("journal write failed");
      },
    }),
  };
  const ctx = context("r-settle-fails");
  ctx.principal = principal;
  const admission = await admit(loggedMeter(failing), ctx);
  requestEnded(ctx, gateway, new Response("data: …"));
  expect(await admission.settle(settlement).catch((e: unknown) => String(e))).toContain(
    "journal write failed",
  );
  expect(written).toHaveLength(1);
  expect(written[0]).toMatchObject({ request_id: "r-settle-fails", status: 200, output_tokens: 22 });
  expect(pendingLines()).toBe(0);
});

test("the path is read without parsing the URL, query left out", () => {
  expect(pathOf("http://x/v1/models?limit=2")).toBe("/v1/models");
  expect(pathOf("http://[::1]:8080/v1/models/modelx-5.5")).toBe("/v1/models/modelx-5.5");
  expect(pathOf("https://gateway.example")).toBe("/");
});
