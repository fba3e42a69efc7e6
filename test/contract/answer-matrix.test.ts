// The answer matrix: every client protocol × every upstream protocol, stream and not, through the
// compiled gateway, with a recording upstream replaying official-shaped answers (answer-fixtures.ts)
// in 7-byte slices. Every answer and every SSE event the gateway emits must pass the official-shape
// schemas (client-schemas.ts), and what the client reads must be what the upstream said: text,
// tool calls, refusals as refusals (Messages: text with stop_reason refusal), thinking with its
// signature, redacted thinking as redacted thinking, cached and cache-written tokens. Also the
// gateway's own failure events (a stream cut short, an upstream error event) and the Responses
// WebSocket warm-up answer.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type RunningGateway, startGateway } from "../helpers/gateway.ts";
import { byteSlices, type RecordingUpstream, startRecordingUpstream } from "../helpers/recording-upstream.ts";
import { readSse } from "../helpers/sse.ts";
import { post } from "../integration/text-setup.ts";
import { MODEL_BY_UPSTREAM, translateConfig } from "../integration/translate-setup.ts";
import {
  PREAMBLE,
  type Protocol,
  REDACTED,
  REFUSAL,
  SCENARIOS,
  type Scenario,
  SIGNATURE,
  TEXT,
  THINK,
  TOOL,
  USAGE,
  upstreamAnswer,
  upstreamStream,
} from "./answer-fixtures.ts";
import { type Summary, summarize, summarizeStream } from "./answer-summary.ts";
import {
  ANSWER_SCHEMAS,
  problems,
  responsesEvent,
  responseObject as responsesObjectSchema,
  streamProblems,
} from "./client-schemas.ts";

type Obj = Record<string, unknown>;
const PROTOCOLS: readonly Protocol[] = ["responses", "chat", "messages"];
const PATHS: Record<Protocol, string> = {
  responses: "/v1/responses",
  chat: "/v1/chat/completions",
  messages: "/v1/messages",
};

let upstream: RecordingUpstream;
let gw: RunningGateway;

function protocolOf(path: string): Protocol {
  if (path.endsWith("/responses")) return "responses";
  return path.endsWith("/chat/completions") ? "chat" : "messages";
}

beforeAll(async () => {
  upstream = startRecordingUpstream((request) => {
    const body = (request.json ?? {}) as Obj;
    const scenario = (/SCENARIO:(\w+)/.exec(new TextDecoder().decode(request.raw))?.[1] ??
      "text") as Scenario;
    const protocol = protocolOf(request.path);
    const model = String(body.model);
    if (body.stream !== true) return Response.json(upstreamAnswer(protocol, model, scenario));
    const includeUsage = (body.stream_options as Obj | undefined)?.include_usage === true;
    return { chunks: byteSlices(upstreamStream(protocol, model, scenario, includeUsage), 7) };
  });
  // The translation rig's three channels (Responses, Chat, Messages), here all on the recording upstream.
  gw = await startGateway({
    config: translateConfig(upstream.url, "[endpoints]\nwebsocket_max_seconds = 600\n"),
  });
}, 60_000);
afterAll(async () => {
  await gw?.dispose();
  await upstream?.stop();
}, 30_000);

const WEATHER_SCHEMA = {
  type: "object",
  properties: { city: { type: "string" }, days: { type: "integer" } },
  required: ["city", "days"],
  additionalProperties: false,
};

/** The client's request for `scenario` (the scenario rides in the prompt for the upstream's script). */
function requestBody(client: Protocol, up: Protocol, scenario: Scenario, stream: boolean): Obj {
  const prompt = `SCENARIO:${scenario} What is the weather in Oslo for two days?`;
  const model = MODEL_BY_UPSTREAM[up];
  const description = "Weather forecast for a city";
  switch (client) {
    case "responses":
      return {
        model,
        input: prompt,
        stream,
        tools: [{ type: "function", name: TOOL.name, description, parameters: WEATHER_SCHEMA, strict: true }],
      };
    case "chat":
      return {
        model,
        messages: [{ role: "user", content: prompt }],
        stream,
        ...(stream ? { stream_options: { include_usage: true } } : {}),
        tools: [{ type: "function", function: { name: TOOL.name, description, parameters: WEATHER_SCHEMA } }],
      };
    case "messages":
      return {
        model,
        max_tokens: 512,
        messages: [{ role: "user", content: prompt }],
        stream,
        tools: [{ name: TOOL.name, description, input_schema: WEATHER_SCHEMA }],
      };
  }
}

/** What the client must read for `scenario`, given which protocols can say what. */
function expected(client: Protocol, up: Protocol, scenario: Scenario): Partial<Summary> {
  const cacheWrite = up === "chat" ? 0 : USAGE.cacheWrite;
  const usage = { input: USAGE.input, cached: USAGE.cached, cacheWrite };
  const thinks = client !== "chat" && up !== "chat";
  switch (scenario) {
    case "tool": {
      const stop = { responses: "completed", chat: "tool_calls", messages: "tool_use" }[client];
      return { ...usage, text: PREAMBLE, toolArgs: TOOL.arguments, stop };
    }
    case "refusal":
      // OpenAI protocols have a refusal; Messages says it with its stop reason and a text block.
      if (client === "messages") return { ...usage, text: REFUSAL, refusal: "", stop: "refusal" };
      if (up === "messages")
        return {
          ...usage,
          text: REFUSAL,
          refusal: "",
          stop: client === "chat" ? "content_filter" : "incomplete/content_filter",
        };
      return { ...usage, text: "", refusal: REFUSAL };
    case "reasoning":
      return thinks
        ? { ...usage, text: TEXT, thinking: THINK, signature: SIGNATURE }
        : { ...usage, text: TEXT };
    case "redacted":
      return thinks
        ? { ...usage, text: TEXT, redacted: [REDACTED], thinking: "" }
        : { ...usage, text: TEXT, redacted: [] };
    case "length": {
      const stop = { responses: "incomplete/max_output_tokens", chat: "length", messages: "max_tokens" }[
        client
      ];
      return { ...usage, text: TEXT, stop };
    }
    default: {
      const stop = { responses: "completed", chat: "stop", messages: "end_turn" }[client];
      return { ...usage, text: TEXT, refusal: "", stop };
    }
  }
}

/** A streamed answer whose every event passed its schema, with the JSON payloads (`[DONE]` left out). */
async function streamed(client: Protocol, up: Protocol, scenario: Scenario) {
  const response = await post(gw, PATHS[client], requestBody(client, up, scenario, true));
  expect(response.status).toBe(200);
  const { events } = await readSse(response);
  expect(streamProblems(client, events)).toEqual([]);
  const payloads = events.filter((e) => e.data !== "[DONE]").map((e) => JSON.parse(e.data) as Obj);
  return { events, payloads };
}

const PAIRS = PROTOCOLS.flatMap((client) =>
  PROTOCOLS.map((up) => ({ client, up, label: `${client} client ← ${up} upstream` })),
);

describe.each(PAIRS)("$label", ({ client, up }) => {
  test.each(SCENARIOS.map((s) => [s]))(
    "%s: the complete answer passes the official schema and says what the upstream said",
    async (scenario) => {
      const response = await post(gw, PATHS[client], requestBody(client, up, scenario, false));
      expect(response.status).toBe(200);
      const answer = (await response.json()) as Obj;
      expect(problems(ANSWER_SCHEMAS[client], answer)).toEqual([]);
      expect(summarize(client, answer)).toMatchObject(expected(client, up, scenario));
    },
  );

  test.each(SCENARIOS.map((s) => [s]))(
    "%s: every streamed event passes its official schema and the stream says what the upstream said",
    async (scenario) => {
      const { payloads } = await streamed(client, up, scenario);
      expect(summarizeStream(client, payloads)).toMatchObject(expected(client, up, scenario));
    },
  );

  test.each([["cut"], ["failed"]] as [Scenario][])(
    "%s upstream stream: the gateway's failure events pass the official schemas and end the stream once",
    async (scenario) => {
      const { events, payloads } = await streamed(client, up, scenario);
      const errors = payloads.filter((p) => p.type === "error" || ("error" in p && p.type === undefined));
      const last = payloads.at(-1) ?? {};
      if (client === "responses") {
        // An upstream's own response.failed may come alone; the gateway's adds an error event first.
        expect(errors.length).toBeLessThanOrEqual(1);
        expect(last.type).toBe("response.failed");
        expect(payloads.filter((p) => p.type === "response.failed")).toHaveLength(1);
      } else {
        expect(errors).toHaveLength(1);
        expect(last).toBe(errors[0] as Obj);
      }
      expect(events.some((e) => e.data === "[DONE]")).toBe(false);
    },
  );
});

/** Sends one response.create frame on a new WebSocket and returns the frames up to the terminal one. */
async function wsTurn(frame: Obj): Promise<Obj[]> {
  const ws = new WebSocket(`${gw.url.replace("http://", "ws://")}/v1/responses`, {
    headers: { authorization: `Bearer ${gw.key ?? ""}` },
  } as unknown as string[]);
  const frames: Obj[] = [];
  const terminal = ["response.completed", "response.incomplete", "response.failed", "error"];
  const done = new Promise<void>((resolve, reject) => {
    ws.onmessage = (e) => {
      const next = JSON.parse(String(e.data)) as Obj;
      frames.push(next);
      if (terminal.includes(String(next.type))) resolve();
    };
    ws.onerror = () => reject(new Error("websocket error"));
  });
  await new Promise<void>((resolve) => {
    ws.onopen = () => resolve();
  });
  ws.send(JSON.stringify({ type: "response.create", ...frame }));
  await done;
  ws.close();
  return frames;
}

describe("a translated Responses answer echoes the client's request, as the API does", () => {
  const tools = [{ type: "function", name: TOOL.name, parameters: WEATHER_SCHEMA, strict: true }];
  const ask = {
    instructions: "Answer briefly.",
    temperature: 0.4,
    max_output_tokens: 300,
    tools,
    tool_choice: "auto",
    parallel_tool_calls: false,
    metadata: { ticket: "T-1" },
    input: "SCENARIO:text Hello",
  };
  const echoed = {
    instructions: "Answer briefly.",
    temperature: 0.4,
    max_output_tokens: 300,
    tools,
    tool_choice: "auto",
    parallel_tool_calls: false,
    metadata: { ticket: "T-1" },
  };
  test.each([["chat"], ["messages"]] as const)("from a %s upstream, complete and streamed", async (up) => {
    const model = MODEL_BY_UPSTREAM[up];
    const whole = (await (await post(gw, "/v1/responses", { model, ...ask })).json()) as Obj;
    expect(problems(responsesObjectSchema, whole)).toEqual([]);
    expect(whole).toMatchObject(echoed);
    const { events } = await readSse(await post(gw, "/v1/responses", { model, ...ask, stream: true }));
    const frames = events.map((e) => JSON.parse(e.data) as Obj);
    for (const type of ["response.created", "response.completed"]) {
      expect(frames.find((f) => f.type === type)?.response).toMatchObject(echoed);
    }
  });
});

describe("Responses WebSocket mode", () => {
  test("the warm-up answer (generate: false) passes the official event and response schemas and echoes the request", async () => {
    const tools = [{ type: "function", name: TOOL.name, parameters: WEATHER_SCHEMA, strict: true }];
    const frames = await wsTurn({
      model: MODEL_BY_UPSTREAM.responses,
      generate: false,
      store: false,
      instructions: "Answer briefly.",
      temperature: 0.4,
      tools,
      input: [{ type: "message", role: "user", content: [{ type: "input_text", text: "Hello" }] }],
    });
    expect(frames.map((f) => f.type)).toEqual(["response.created", "response.completed"]);
    expect(frames.flatMap((f) => problems(responsesEvent, f))).toEqual([]);
    expect(frames[1]?.response).toMatchObject({
      instructions: "Answer briefly.",
      temperature: 0.4,
      tools,
      status: "completed",
    });
  });

  test.each(PROTOCOLS.map((p) => [p]))(
    "a turn on a %s upstream: every frame passes its official event schema",
    async (up) => {
      const frames = await wsTurn({
        model: MODEL_BY_UPSTREAM[up],
        store: false,
        input: [
          { type: "message", role: "user", content: [{ type: "input_text", text: "SCENARIO:refusal Hi" }] },
        ],
      });
      expect(frames.flatMap((f, i) => problems(responsesEvent, f).map((p) => `frame ${i}: ${p}`))).toEqual(
        [],
      );
      expect(frames.map((f) => f.sequence_number)).toEqual(frames.map((_, i) => i));
      expect(summarizeStream("responses", frames)).toMatchObject(expected("responses", up, "refusal"));
    },
  );
});
