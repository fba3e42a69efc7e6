// The translation matrix: every client protocol (Responses, Chat Completions, Messages) against
// every upstream protocol (the same three, over HTTP to `modelgate sim`), through the compiled
// gateway: non-stream, stream, tool round trip, structured output, reasoning / thinking, upstream
// errors and a broken stream; and usage totals equal across all nine pairs for the same answer.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Ajv from "ajv";
import { readSse } from "../helpers/sse.ts";
import { DRIVERS, type Driver } from "./text-protocols.ts";
import { post } from "./text-setup.ts";
import {
  MODEL_BY_UPSTREAM,
  startTranslateRig,
  type TranslateRig,
  UPSTREAMS,
  type Upstream,
} from "./translate-setup.ts";

let rig: TranslateRig;
beforeAll(async () => {
  rig = await startTranslateRig();
}, 30_000);
afterAll(async () => {
  await rig?.stop();
}, 30_000);

type Obj = Record<string, unknown>;
const ajv = new Ajv({ strict: false });
const WEATHER = {
  type: "object",
  properties: { city: { type: "string", minLength: 2 }, days: { type: "integer", minimum: 1, maximum: 7 } },
  required: ["city", "days"],
  additionalProperties: false,
};
const REPORT = {
  type: "object",
  properties: {
    title: { type: "string", maxLength: 40 },
    tags: { type: "array", items: { type: "string" }, minItems: 2, maxItems: 4 },
  },
  required: ["title", "tags"],
  additionalProperties: false,
};

const PAIRS = DRIVERS.flatMap((driver) =>
  UPSTREAMS.map((upstream) => ({ driver, upstream, label: `${driver.name} client → ${upstream} upstream` })),
);
const totals = new Map<string, number>();

async function ask(driver: Driver, upstream: Upstream, body: Obj): Promise<Response> {
  return post(rig.gw, driver.path, { ...body, model: MODEL_BY_UPSTREAM[upstream] });
}

async function json(response: Response): Promise<Obj> {
  return (await response.json()) as Obj;
}

describe.each(PAIRS)("$label", ({ driver, upstream }) => {
  test("non-stream answer with usage", async () => {
    const response = await ask(driver, upstream, driver.body({ text: "Describe the harbour at dawn." }));
    expect(response.status).toBe(200);
    const answer = await json(response);
    expect(driver.text(answer).length).toBeGreaterThan(10);
    const usage = driver.usage(answer);
    expect(usage.input).toBeGreaterThan(3);
    expect(usage.output).toBeGreaterThan(5);
    totals.set(`${driver.name}/${upstream}`, usage.input + usage.output);
    if (driver.name !== upstream) expect(answer.model).toBe(MODEL_BY_UPSTREAM[upstream]);
  });

  test("stream: translated deltas give the non-stream text and end normally", async () => {
    const plain = await json(
      await ask(driver, upstream, driver.body({ text: "Tell me about lighthouses." })),
    );
    const response = await ask(
      driver,
      upstream,
      driver.body({ text: "Tell me about lighthouses.", stream: true }),
    );
    expect(response.status).toBe(200);
    const { events } = await readSse(response);
    expect(driver.streamText(events)).toBe(driver.text(plain));
    expect(driver.endedNormally(events)).toBe(true);
  });

  test("tool call round trip", async () => {
    const a = {
      text: "Check the weather with get_weather.",
      tool: { name: "get_weather", parameters: WEATHER },
    };
    const first = await json(await ask(driver, upstream, driver.body(a)));
    const call = driver.call(first);
    expect(call?.name).toBe("get_weather");
    expect(ajv.validate(WEATHER, call?.args)).toBe(true);
    if (call === undefined) return;
    const second = await json(await ask(driver, upstream, driver.followUp(a, call, '{"temp_c":19}')));
    expect(driver.call(second)).toBeUndefined();
    expect(driver.text(second)).toContain("The tool returned");
  });

  test("streamed tool call carries the name and schema-valid arguments", async () => {
    const a = {
      text: "Use get_weather now.",
      tool: { name: "get_weather", parameters: WEATHER },
      stream: true,
    };
    const { events } = await readSse(await ask(driver, upstream, driver.body(a)));
    expect(driver.endedNormally(events)).toBe(true);
    const args = streamedArguments(
      driver,
      events.map((e) => e.data),
    );
    expect(ajv.validate(WEATHER, JSON.parse(args))).toBe(true);
  });

  test("structured output conforms to the schema", async () => {
    const answer = await json(await ask(driver, upstream, driver.body({ text: "Report.", schema: REPORT })));
    expect(ajv.validate(REPORT, JSON.parse(driver.text(answer)))).toBe(true);
  });

  test("reasoning / thinking crosses when both sides can show it", async () => {
    const answer = await json(
      await ask(driver, upstream, driver.body({ text: "Think first.", reasoning: true })),
    );
    const visible = driver.name !== "chat" && upstream !== "chat";
    if (visible) expect(driver.hasReasoning(answer)).toBe(true);
    if (driver.name !== "messages" && upstream !== "messages")
      expect(driver.usage(answer).reasoning).toBeGreaterThan(0);
    expect(driver.text(answer).length).toBeGreaterThan(0);
  });

  test.each([
    [400, 400],
    [429, 429],
    [500, 502],
  ])("upstream %d → %d in the client's protocol", async (status, expected) => {
    const response = await ask(driver, upstream, driver.body({ text: `fail sim:error=${status}` }));
    expect(response.status).toBe(expected);
    expect(driver.errorMessage(await json(response))).toContain(String(status));
  });

  test("a broken upstream stream ends with the client protocol's error event", async () => {
    const response = await ask(driver, upstream, driver.body({ text: "Go on sim:drop=3", stream: true }));
    const { events } = await readSse(response);
    expect(driver.endedNormally(events)).toBe(false);
    expect(driver.endedWithError(events)).toBe(true);
  });
});

test("usage totals are equal across all nine protocol pairs for the same simulated answer", () => {
  expect(totals.size).toBe(9);
  expect(new Set(totals.values()).size).toBe(1);
});

function streamedArguments(driver: Driver, data: string[]): string {
  const payloads = data.filter((d) => d !== "[DONE]").map((d) => JSON.parse(d) as Obj);
  if (driver.name === "responses") {
    const done = payloads.find((p) => p.type === "response.function_call_arguments.done");
    return String(done?.arguments);
  }
  if (driver.name === "chat") {
    return payloads
      .flatMap(
        (p) =>
          (((p.choices as Obj[] | undefined)?.[0]?.delta as Obj | undefined)?.tool_calls as
            | Obj[]
            | undefined) ?? [],
      )
      .map((c) => String((c.function as Obj).arguments ?? ""))
      .join("");
  }
  return payloads
    .map((p) => p.delta as Obj | undefined)
    .filter((d) => d?.type === "input_json_delta")
    .map((d) => String(d?.partial_json))
    .join("");
}
