// The conformance table: every upstream adapter (OpenAI Responses, OpenAI Chat and Anthropic over
// HTTP against the simulator, and the in-process simulator) runs the same checks through the
// compiled gateway: non-stream, stream, tool round trip, structured output, reasoning, upstream
// errors mapped to the client's protocol, and an upstream disconnect mid-stream.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Ajv from "ajv";
import type { RunningGateway } from "../helpers/gateway.ts";
import { readSse } from "../helpers/sse.ts";
import { DRIVERS, type Driver } from "./text-protocols.ts";
import { post, startTextRig, type TextRig } from "./text-setup.ts";

let rig: TextRig;
beforeAll(async () => {
  rig = await startTextRig();
}, 30_000);
afterAll(async () => {
  const t = performance.now();
  await rig?.stop();
  console.log("rig stopped in", Math.round(performance.now() - t), "ms");
}, 30_000);

const WEATHER = {
  type: "object",
  properties: {
    city: { type: "string", minLength: 2 },
    days: { type: "integer", minimum: 1, maximum: 7 },
    unit: { type: "string", enum: ["celsius", "fahrenheit"] },
  },
  required: ["city", "days", "unit"],
  additionalProperties: false,
};

const REPORT = {
  type: "object",
  properties: {
    title: { type: "string", maxLength: 40 },
    score: { type: "number", minimum: 0, maximum: 1 },
    tags: { type: "array", items: { type: "string" }, minItems: 2, maxItems: 4 },
    owner: {
      type: "object",
      properties: { name: { type: "string" }, level: { enum: ["low", "high"] } },
      required: ["name", "level"],
      additionalProperties: false,
    },
  },
  required: ["title", "score", "tags", "owner"],
  additionalProperties: false,
};

const ajv = new Ajv({ strict: false });
const ADAPTERS: { name: string; gw: () => RunningGateway }[] = [
  { name: "http adapter", gw: () => rig.http },
  { name: "in-process sim", gw: () => rig.inproc },
];

async function json(response: Response): Promise<Record<string, unknown>> {
  return (await response.json()) as Record<string, unknown>;
}

describe.each(ADAPTERS)("$name", (adapter) => {
  describe.each(DRIVERS.map((d) => ({ ...d, label: d.name })))("$label", (driver: Driver) => {
    test("non-stream: text with real usage, deterministic", async () => {
      const first = await post(adapter.gw(), driver.path, driver.body({ text: "Describe the river." }));
      expect(first.status).toBe(200);
      const a = await json(first);
      const b = await json(
        await post(adapter.gw(), driver.path, driver.body({ text: "Describe the river." })),
      );
      expect(driver.text(a).length).toBeGreaterThan(10);
      expect(driver.text(b)).toBe(driver.text(a));
      const usage = driver.usage(a);
      expect(usage.input).toBeGreaterThan(3);
      expect(usage.output).toBeGreaterThanOrEqual(12);
    });

    test("stream: deltas reassemble the same text and the stream ends normally", async () => {
      const plain = await json(
        await post(adapter.gw(), driver.path, driver.body({ text: "Tell me a story." })),
      );
      const response = await post(
        adapter.gw(),
        driver.path,
        driver.body({ text: "Tell me a story.", stream: true }),
      );
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toContain("text/event-stream");
      expect(response.headers.get("x-accel-buffering")).toBe("no");
      const { events } = await readSse(response);
      expect(driver.streamText(events)).toBe(driver.text(plain));
      expect(driver.endedNormally(events)).toBe(true);
    });

    test("tool call with schema-valid arguments, then the tool result continues the conversation", async () => {
      const ask = {
        text: "What is the weather? Use get_weather please.",
        tool: { name: "get_weather", parameters: WEATHER },
      };
      const first = await json(await post(adapter.gw(), driver.path, driver.body(ask)));
      const call = driver.call(first);
      expect(call?.name).toBe("get_weather");
      expect(ajv.validate(WEATHER, call?.args)).toBe(true);
      if (!call) return;
      const second = await json(
        await post(adapter.gw(), driver.path, driver.followUp(ask, call, '{"temp_c":21}')),
      );
      expect(driver.call(second)).toBeUndefined();
      expect(driver.text(second)).toContain("The tool returned");
    });

    test("structured output conforms to the JSON schema", async () => {
      const answer = await json(
        await post(adapter.gw(), driver.path, driver.body({ text: "Report.", schema: REPORT })),
      );
      const parsed: unknown = JSON.parse(driver.text(answer));
      expect(ajv.validate(REPORT, parsed)).toBe(true);
    });

    test("reasoning / thinking is produced and counted", async () => {
      const answer = await json(
        await post(adapter.gw(), driver.path, driver.body({ text: "Think first.", reasoning: true })),
      );
      expect(driver.hasReasoning(answer)).toBe(true);
      if (driver.name !== "messages") expect(driver.usage(answer).reasoning).toBe(160);
    });

    test.each([
      [400, 400],
      [401, 502],
      [429, 429],
      [500, 502],
    ])("upstream %d is answered %d in the client's protocol", async (upstream, client) => {
      const response = await post(
        adapter.gw(),
        driver.path,
        driver.body({ text: `fail sim:error=${upstream}` }),
      );
      expect(response.status).toBe(client);
      const body = await json(response);
      expect(driver.errorMessage(body)).toContain(String(upstream));
      if (upstream === 429) expect(Number(response.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    });

    test("an upstream disconnect mid-stream ends with the protocol's error event", async () => {
      const response = await post(
        adapter.gw(),
        driver.path,
        driver.body({ text: "Go on sim:drop=4", stream: true }),
      );
      expect(response.status).toBe(200);
      const { events } = await readSse(response);
      expect(driver.streamText(events).length).toBeGreaterThan(0);
      expect(driver.endedNormally(events)).toBe(false);
      expect(driver.endedWithError(events)).toBe(true);
    });
  });
});
