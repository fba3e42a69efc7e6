// Property tests through the compiled binary (issue 17, fuzzing): mutated request bodies on the
// three text endpoints (fields of any type, unknown fields, odd numbers, deep nesting, inserted
// bytes, truncation) are answered 200 or a 4xx — never a 5xx, never a hang — and a refused
// request changes no balance. Fixed seed (FUZZ_SEED overrides it); each run is one request.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { balanceOf, type RunningGateway, startGateway } from "../helpers/gateway.ts";

const SEED = Number(process.env.FUZZ_SEED ?? 170_009);
const RUNS = 60;
const encoder = new TextEncoder();

let gw: RunningGateway;
let key: string;

beforeAll(async () => {
  gw = await startGateway();
  key = gw.key ?? "";
}, 30_000);
afterAll(async () => {
  await gw.dispose();
}, 30_000);

const BASES: Record<string, Record<string, unknown>> = {
  "/v1/chat/completions": {
    model: "modelx-5.4-mini",
    max_tokens: 16,
    messages: [{ role: "user", content: "hi" }],
  },
  "/v1/responses": { model: "modelx-5.4-mini", max_output_tokens: 16, input: "hi" },
  "/v1/messages": {
    model: "modelz-haiku-4-5-20251001",
    max_tokens: 16,
    messages: [{ role: "user", content: "hi" }],
  },
};
const FIELDS = [
  "model",
  "messages",
  "input",
  "max_tokens",
  "max_output_tokens",
  "temperature",
  "top_p",
  "n",
  "stream",
  "tools",
  "tool_choice",
  "metadata",
  "stop",
  "response_format",
  "system",
  "reasoning",
  "thinking",
  "x_unknown",
];

const odd = fc.constantFrom(1e308, -1e308, 5e-324, -0, 2 ** 53 + 2, -1, 0, 1.5, 1000, 1e21);
const anyValue = fc.oneof(fc.jsonValue({ maxDepth: 4 }), odd);

type Mutation =
  | { kind: "set"; field: string; value: unknown }
  | { kind: "truncate"; at: number }
  | { kind: "insert"; at: number; bytes: Uint8Array }
  | { kind: "nest"; depth: number };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant("set" as const), field: fc.constantFrom(...FIELDS), value: anyValue }),
  fc.record({ kind: fc.constant("truncate" as const), at: fc.nat({ max: 200 }) }),
  fc.record({
    kind: fc.constant("insert" as const),
    at: fc.nat({ max: 200 }),
    bytes: fc.uint8Array({ minLength: 1, maxLength: 4 }),
  }),
  fc.record({ kind: fc.constant("nest" as const), depth: fc.integer({ min: 100, max: 5000 }) }),
);

function bodyOf(path: string, mutations: readonly Mutation[]): Uint8Array {
  const json: Record<string, unknown> = structuredClone(BASES[path] ?? {});
  for (const m of mutations) {
    if (m.kind === "set") json[m.field] = m.value;
    if (m.kind === "nest") json.metadata = JSON.parse(`${"[".repeat(m.depth)}1${"]".repeat(m.depth)}`);
  }
  let bytes = encoder.encode(JSON.stringify(json));
  for (const m of mutations) {
    if (m.kind === "truncate") bytes = bytes.subarray(0, m.at % (bytes.length + 1));
    if (m.kind === "insert") {
      const at = m.at % (bytes.length + 1);
      bytes = new Uint8Array([...bytes.subarray(0, at), ...m.bytes, ...bytes.subarray(at)]);
    }
  }
  return bytes;
}

describe("text endpoints", () => {
  test("mutated bodies get 200 or a 4xx, and refusals change no balance", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...Object.keys(BASES)),
        fc.array(mutation, { minLength: 1, maxLength: 3 }),
        async (path, mutations) => {
          const before = await balanceOf(gw, key);
          const response = await fetch(`${gw.url}${path}`, {
            method: "POST",
            headers: {
              authorization: `Bearer ${key}`,
              "content-type": "application/json",
              "anthropic-version": "2023-06-01",
            },
            body: bodyOf(path, mutations),
            signal: AbortSignal.timeout(10_000),
          });
          await response.arrayBuffer();
          expect(response.status).toBeLessThan(500);
          if (response.status !== 200) expect(await balanceOf(gw, key)).toEqual(before);
        },
      ),
      { seed: SEED, numRuns: RUNS },
    );
    expect(gw.logs()).not.toContain('"level":"error"');
  }, 60_000);
});
