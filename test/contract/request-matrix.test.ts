// The outgoing-contract matrix: every client protocol × every upstream protocol, stream and not,
// for every scenario of request-scenarios.ts, through the compiled gateway and its real HTTP
// adapters to a recording upstream. Every request the upstream receives must pass the strict
// contract of its endpoint (the oracle); the simulator only produces the replies.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { PROTOCOLS as RECORDS } from "../../src/protocols/index.ts";
import { simTextAnswer } from "../../src/sim/text/routes.ts";
import { type RunningGateway, startGateway } from "../helpers/gateway.ts";
import {
  type RecordedRequest,
  type RecordingUpstream,
  startRecordingUpstream,
} from "../helpers/recording-upstream.ts";
import { MODEL_BY_UPSTREAM, translateConfig, UPSTREAMS } from "../integration/translate-setup.ts";
import { ChatRequestContract } from "./chat-request.ts";
import { problems } from "./client-schemas.ts";
import { MessagesRequestContract, thinkingFormProblem } from "./messages-request.ts";
import { type ClientProtocol, SCENARIOS } from "./request-scenarios.ts";
import { ResponsesRequestContract } from "./responses-request.ts";

type Obj = Record<string, unknown>;
const PROTOCOLS = UPSTREAMS;
/** The public model each upstream protocol serves in this rig (the translation tests' choice). */
const MODEL = MODEL_BY_UPSTREAM;

let upstream: RecordingUpstream;
let gw: RunningGateway;

function protocolOf(path: string): ClientProtocol {
  if (path.endsWith("/responses")) return "responses";
  if (path.endsWith("/chat/completions")) return "chat";
  return "messages";
}

beforeAll(async () => {
  upstream = startRecordingUpstream((request) =>
    simTextAnswer(
      protocolOf(request.path),
      new Request("http://sim.local/", { method: "POST", body: request.raw }),
      { seed: 5 },
    ),
  );
  // The translation rig's three channels, plus the Messages models whose thinking form differs.
  const budgetModels = `[[channels]]
kind = "anthropic"
name = "up-messages-more"
base_url = "${upstream.url}"
models = ["modelz-haiku-4-5-20251001"]
`;
  gw = await startGateway({ config: translateConfig(upstream.url, budgetModels) });
}, 30_000);

afterAll(async () => {
  await gw?.dispose();
  await upstream?.stop();
}, 30_000);

/** Sends `body` as a client of `client` and returns the request the upstream received. */
async function sendThrough(
  client: ClientProtocol,
  body: Obj,
): Promise<{ status: number; sent: RecordedRequest }> {
  upstream.clear();
  const response = await fetch(`${gw.url}${RECORDS[client].path}`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${gw.key}`,
      "content-type": "application/json",
      "anthropic-version": "2023-06-01",
    },
    body: JSON.stringify(body),
  });
  await response.arrayBuffer();
  return { status: response.status, sent: upstream.last() };
}

function contractProblems(sent: RecordedRequest): string[] {
  switch (protocolOf(sent.path)) {
    case "responses":
      return problems(ResponsesRequestContract, sent.json);
    case "chat":
      return problems(ChatRequestContract, sent.json);
    case "messages":
      return problems(MessagesRequestContract, sent.json);
  }
}

const CASES = SCENARIOS.flatMap((scenario) =>
  PROTOCOLS.flatMap((client) => {
    const body = scenario.bodies[client];
    if (body === undefined) return [];
    return PROTOCOLS.flatMap((to) =>
      [false, true].map((stream) => ({
        label: `${scenario.name}: ${client} client → ${to} upstream${stream ? ", stream" : ""}`,
        client,
        to,
        body: { ...body, model: MODEL[to], stream },
      })),
    );
  }),
);

describe("every captured upstream request passes its strict contract", () => {
  test.each(CASES)("$label", async ({ client, to, body }) => {
    const { status, sent } = await sendThrough(client, body);
    expect(protocolOf(sent.path)).toBe(to);
    expect(contractProblems(sent)).toEqual([]);
    expect(status).toBe(200);
  });
});

describe("what the writers choose, seen upstream", () => {
  const sent = async (client: ClientProtocol, to: ClientProtocol, scenario: string, extra: Obj = {}) => {
    const body = SCENARIOS.find((s) => s.name === scenario)?.bodies[client];
    if (body === undefined) throw new Error(`no ${client} body for ${scenario}`);
    const result = await sendThrough(client, { ...body, model: MODEL[to], ...extra });
    expect(contractProblems(result.sent)).toEqual([]);
    return result.sent.json as Obj;
  };

  test("a cap below 16 reaches a Responses upstream as 16", async () => {
    expect((await sent("chat", "responses", "sampling and a small output cap")).max_output_tokens).toBe(16);
    expect((await sent("messages", "responses", "sampling and a small output cap")).max_output_tokens).toBe(
      16,
    );
  });

  test("temperature wins over top_p toward Messages", async () => {
    const body = await sent("chat", "messages", "sampling and a small output cap");
    expect(body.temperature).toBe(0.7);
    expect(body.top_p).toBeUndefined();
  });

  test("strict is sent only for a strict-compatible schema", async () => {
    const loose = await sent(
      "messages",
      "responses",
      "structured output with a schema that is not strict-compatible",
    );
    expect((loose.text as { format: Obj }).format.strict).not.toBe(true);
    const strict = await sent("messages", "chat", "structured output with a strict schema");
    expect((strict.response_format as { json_schema: Obj }).json_schema.strict).toBe(true);
  });

  test("a forced tool turns thinking off toward Messages, and keeps the forced choice", async () => {
    const body = await sent("chat", "messages", "a forced tool with reasoning asked");
    expect(body.thinking).toBeUndefined();
    expect(body.tool_choice).toEqual({ type: "any" });
  });

  test("a tool loop with no thinking block to send back turns thinking off", async () => {
    const body = await sent("responses", "messages", "tool loop with assistant history and reasoning on");
    expect(body.thinking).toBeUndefined();
  });

  test("mid-conversation system joins the top-level system, translated and passed through", async () => {
    for (const client of ["messages", "chat", "responses"] as const) {
      const body = await sent(client, "messages", "system and developer messages mid-conversation");
      expect(String(body.system)).toContain("Answer in French.");
      expect(String(body.system)).toContain("From now on answer in German.");
    }
  });

  test("adaptive thinking for models that take it, a budget for the others", async () => {
    const ask = { messages: [{ role: "user", content: "Think about tides." }], reasoning_effort: "high" };
    for (const [model, form] of [
      ["modelz-opus-4-7", "adaptive"],
      ["modelz-sonnet-4-6", "adaptive"],
      ["modelz-haiku-4-5-20251001", "budget"],
    ] as const) {
      const { sent: request } = await sendThrough("chat", { ...ask, model, max_completion_tokens: 8000 });
      expect(contractProblems(request)).toEqual([]);
      expect(thinkingFormProblem(request.json, form)).toBeUndefined();
      const body = request.json as Obj;
      expect(body.thinking).toBeDefined();
      if (form === "adaptive") expect(body.output_config).toEqual({ effort: "high" });
    }
  });

  test("Opus 4.7 gets no sampling parameters", async () => {
    const { sent: request } = await sendThrough("chat", {
      model: "modelz-opus-4-7",
      messages: [{ role: "user", content: "Hi" }],
      temperature: 0.2,
    });
    expect(contractProblems(request)).toEqual([]);
    expect((request.json as Obj).temperature).toBeUndefined();
  });

  test("json_object toward Messages becomes a forced answer tool whose input is any object", async () => {
    const body = await sent("chat", "messages", "json_object output");
    expect(body.output_config).toBeUndefined();
    expect(body.tools).toEqual([
      expect.objectContaining({ name: "modelgate_json_answer", input_schema: { type: "object" } }),
    ]);
    expect(body.tool_choice).toEqual({ type: "tool", name: "modelgate_json_answer" });
  });

  test("assistant history reaches a Responses upstream as string content; reasoning with its id", async () => {
    const body = await sent("chat", "responses", "reasoning replayed from history");
    expect(body.input).toContainEqual({ role: "assistant", content: "Sunny, 18 C." });
    const mixed = await sent("messages", "responses", "reasoning replayed from history");
    for (const item of mixed.input as Obj[])
      if (item.type === "reasoning") expect(typeof item.id).toBe("string");
  });

  test("prompt caching: cache_control reaches Anthropic intact, prompt_cache_key reaches OpenAI", async () => {
    const anthropic = await sent("messages", "messages", "prompt caching hints");
    expect(anthropic.system).toEqual([
      { type: "text", text: "You are a harbour guide.", cache_control: { type: "ephemeral" } },
    ]);
    expect((anthropic.tools as Obj[])[0]?.cache_control).toEqual({ type: "ephemeral", ttl: "1h" });
    for (const [client, to] of [
      ["responses", "chat"],
      ["chat", "responses"],
    ] as const) {
      expect((await sent(client, to, "prompt caching hints")).prompt_cache_key).toBe("tenant-42");
    }
    const marked = await sent("responses", "messages", "prompt caching hints");
    expect(marked.system).toEqual([
      { type: "text", text: "You are a harbour guide.", cache_control: { type: "ephemeral" } },
    ]);
  });
});
