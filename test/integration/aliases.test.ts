// Client-facing aliases through the compiled binary (`[aliases]`): a name clients hard-code works on
// every endpoint (Responses, Chat, Messages, count_tokens, images; JSON and SSE), is sent upstream
// as its target, answers under the name the client asked for, is billed as its target, and its
// usage record keeps both names; GET /v1/models lists it for groups allowed its target; a group's
// own alias wins; a bad alias stops the gateway at start with its path.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chatAnswer } from "../helpers/chat-rig.ts";
import { createKey, type RunningGateway, serveRefuses, startGateway } from "../helpers/gateway.ts";
import { type RecordingUpstream, startRecordingUpstream } from "../helpers/recording-upstream.ts";
import { payloads, readSse } from "../helpers/sse.ts";
import { waitForUsage } from "../helpers/usage-records.ts";
import { keyAccepted } from "../helpers/wait.ts";

let gw: RunningGateway;
let upstream: RecordingUpstream;
let minis: string;

const config = (upstreamUrl: string) => `
[sim]
seed = 7

[aliases.models]
"gpt-4o" = "modelx-5.5"
"claude-sonnet-4-5" = "modelz-sonnet-4-5-20250929"
"gpt-image-1" = "modelx-image-1"
"fast" = "gpt-4o"
"legacy" = "modelx-5.2"

[aliases.groups.minis]
"gpt-4o" = "modelx-5.4-mini"

[[channels]]
kind = "sim"
name = "sim"
models = ["modelx-5.5", "modelx-5.4*", "modelx-image-*", "modelz-*"]

[[channels]]
kind = "openai-chat"
name = "recorded"
base_url = "${upstreamUrl}/v1"
models = ["modelx-5.2"]
`;

let counter = 0;
function send(
  path: string,
  body: unknown,
  secret = gw.key ?? "",
): { id: string; response: Promise<Response> } {
  const id = `req_alias_${++counter}_${Date.now()}`;
  const auth: Record<string, string> = path.startsWith("/v1/messages")
    ? { "x-api-key": secret, "anthropic-version": "2023-06-01" }
    : { authorization: `Bearer ${secret}` };
  const response = fetch(`${gw.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-request-id": id, ...auth },
    body: JSON.stringify(body),
  });
  return { id, response };
}

const BODIES = {
  "/v1/responses": (model: string, stream: boolean) => ({
    model,
    input: "Say hi.",
    max_output_tokens: 60,
    stream,
  }),
  "/v1/chat/completions": (model: string, stream: boolean) => ({
    model,
    messages: [{ role: "user", content: "Say hi." }],
    max_tokens: 60,
    stream,
    ...(stream ? { stream_options: { include_usage: true } } : {}),
  }),
  "/v1/messages": (model: string, stream: boolean) => ({
    model,
    max_tokens: 60,
    messages: [{ role: "user", content: "Say hi." }],
    stream,
  }),
} as const;

/** The model an answer names: the JSON body's, or every streamed event's that names one. */
async function answeredModels(response: Response, stream: boolean): Promise<string[]> {
  if (!stream) return [((await response.json()) as { model: string }).model];
  const found: string[] = [];
  for (const event of payloads((await readSse(response)).events)) {
    const holder = (event.response ?? event.message ?? event) as Record<string, unknown>;
    if (typeof holder.model === "string") found.push(holder.model);
  }
  return found;
}

beforeAll(async () => {
  upstream = startRecordingUpstream((request) => {
    const model = (request.json as { model: string }).model;
    return chatAnswer(model, "hi", { prompt_tokens: 5, completion_tokens: 2 });
  });
  gw = await startGateway({ config: config(upstream.url) });
  expect((await gw.cli(["groups", "set", "minis", "--models", "modelx-5.4-mini,modelx-5.5"])).code).toBe(0);
  minis = (await createKey(gw, ["--account", "default", "--group", "minis", "--name", "minis"])).secret;
  await keyAccepted(gw.url, minis);
}, 60_000);

afterAll(async () => {
  await gw.dispose();
  await upstream.stop();
}, 30_000);

describe("an alias works on every text endpoint, JSON and SSE", () => {
  for (const path of Object.keys(BODIES) as (keyof typeof BODIES)[]) {
    for (const stream of [false, true]) {
      const alias = path === "/v1/messages" ? "claude-sonnet-4-5" : "gpt-4o";
      const target = path === "/v1/messages" ? "modelz-sonnet-4-5-20250929" : "modelx-5.5";
      test(`${path} ${stream ? "stream" : "JSON"}: "${alias}" is served and billed as ${target}, recorded with both names`, async () => {
        const viaAlias = send(path, BODIES[path](alias, stream));
        const response = await viaAlias.response;
        expect(response.status).toBe(200);
        const models = await answeredModels(response, stream);
        expect(models.length).toBeGreaterThan(0);
        expect(new Set(models)).toEqual(new Set([alias]));
        const direct = send(path, BODIES[path](target, stream));
        expect((await direct.response).status).toBe(200);
        await (await direct.response).arrayBuffer();
        const [aliased, plain] = await Promise.all([
          waitForUsage(gw, viaAlias.id),
          waitForUsage(gw, direct.id),
        ]);
        expect([aliased.model, aliased.alias]).toEqual([target, alias]);
        expect([plain.model, plain.alias]).toEqual([target, null]);
        // The same seeded answer for the same request: the same tokens at the target's prices.
        expect(aliased.cost_nanos).toBeGreaterThan(0);
        expect(aliased.cost_nanos).toBe(plain.cost_nanos);
      });
    }
  }

  test("an alias of an alias ends at its target; the upstream receives the target's id", async () => {
    const chained = send("/v1/chat/completions", BODIES["/v1/chat/completions"]("fast", false));
    expect((await chained.response).status).toBe(200);
    expect((await waitForUsage(gw, chained.id)).model).toBe("modelx-5.5");
    const legacy = send("/v1/chat/completions", BODIES["/v1/chat/completions"]("legacy", false));
    const response = await legacy.response;
    expect(response.status).toBe(200);
    expect(((await response.json()) as { model: string }).model).toBe("legacy");
    expect((upstream.last().json as { model: string }).model).toBe("modelx-5.2");
    const record = await waitForUsage(gw, legacy.id);
    expect([record.model, record.alias]).toEqual(["modelx-5.2", "legacy"]);
  });

  test("count_tokens takes an alias", async () => {
    const counted = send("/v1/messages/count_tokens", {
      model: "claude-sonnet-4-5",
      messages: [{ role: "user", content: "Say hi." }],
    });
    const response = await counted.response;
    expect(response.status).toBe(200);
    expect(((await response.json()) as { input_tokens: number }).input_tokens).toBeGreaterThan(0);
  });
});

describe("an alias of an image model", () => {
  for (const stream of [false, true]) {
    test(`/v1/images/generations ${stream ? "stream" : "JSON"} is billed as the target and records both names`, async () => {
      const made = send("/v1/images/generations", {
        model: "gpt-image-1",
        prompt: "a red square",
        size: "1024x1024",
        quality: "low",
        stream,
      });
      const response = await made.response;
      expect(response.status).toBe(200);
      await response.arrayBuffer();
      const record = await waitForUsage(gw, made.id);
      expect([record.model, record.alias]).toEqual(["modelx-image-1", "gpt-image-1"]);
      expect(record.cost_nanos).toBeGreaterThan(0);
    });
  }
});

describe("groups and lists", () => {
  test("a group's own alias wins over the global one", async () => {
    const mini = send("/v1/chat/completions", BODIES["/v1/chat/completions"]("gpt-4o", false), minis);
    expect((await mini.response).status).toBe(200);
    const record = await waitForUsage(gw, mini.id);
    expect([record.model, record.alias]).toEqual(["modelx-5.4-mini", "gpt-4o"]);
  });

  test("GET /v1/models lists an alias only for groups allowed its target", async () => {
    const list = async (secret: string, headers: Record<string, string> = {}) => {
      const response = await fetch(`${gw.url}/v1/models`, {
        headers: { authorization: `Bearer ${secret}`, ...headers },
      });
      expect(response.status).toBe(200);
      return ((await response.json()) as { data: { id: string }[] }).data.map((m) => m.id);
    };
    const all = await list(gw.key ?? "");
    for (const alias of ["gpt-4o", "claude-sonnet-4-5", "gpt-image-1", "fast", "legacy"])
      expect(all).toContain(alias);
    const mine = await list(minis);
    // minis may use modelx-5.4-mini and modelx-5.5: its gpt-4o (→ mini) and fast (→ global gpt-4o → 5.5).
    expect(mine).toEqual(["modelx-5.5", "modelx-5.4-mini", "fast", "gpt-4o"]);
    expect(await list(minis, { "anthropic-version": "2023-06-01" })).toEqual(mine);
    const one = await fetch(`${gw.url}/v1/models/gpt-4o`, { headers: { authorization: `Bearer ${minis}` } });
    expect(((await one.json()) as { id: string }).id).toBe("gpt-4o");
  });

  test("an alias whose target the group may not use is 403 naming both", async () => {
    const refused = send("/v1/messages", BODIES["/v1/messages"]("claude-sonnet-4-5", false), minis);
    const response = await refused.response;
    expect(response.status).toBe(403);
    const text = await response.text();
    expect(text).toContain("modelz-sonnet-4-5-20250929");
    expect(text).toContain("claude-sonnet-4-5");
  });
});

describe("bad aliases stop the gateway at start, naming the path", () => {
  const cases: [string, string, string][] = [
    ["unknown target", `[aliases.models]\n"gpt-4o" = "gpt-9"\n`, 'aliases.models.gpt-4o: "gpt-9" is neither'],
    [
      "cycle",
      `[aliases.models]\n"a" = "b"\n"b" = "a"\n`,
      "aliases.models.a: aliases form a cycle: a → b → a",
    ],
    [
      "clash with a catalog id",
      `[aliases.models]\n"modelx-5.5" = "modelx-5.4"\n`,
      'aliases.models.modelx-5.5: "modelx-5.5" is a catalog model id',
    ],
    [
      "group cycle through a global alias",
      `[aliases.models]\n"a" = "b"\n[aliases.groups.g]\n"b" = "a"\n`,
      "aliases.groups.g.b: aliases form a cycle",
    ],
  ];
  for (const [name, toml, message] of cases) {
    test(name, async () => {
      const result = await serveRefuses(toml);
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain(message);
    });
  }
});
