// The official OpenAI TypeScript SDK, unchanged, against the running gateway: embeddings.create
// with a string, an array, token ids and token-id arrays, the SDK's default (it asks for base64
// and decodes it) and explicit float, and `dimensions` — through the in-process simulator
// (modelx-embed-3-small) and through an OpenAI-kind channel to the simulator over HTTP
// (modelx-embed-3-large).
import { describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { sdkRig } from "../helpers/sdk-rig.ts";

const rig = sdkRig({
  inProcess: ["modelx-embed-3-small"],
  overHttp: ["modelx-embed-3-large"],
  kind: "openai-chat",
});

const norm = (x: number[]) => Math.sqrt(x.reduce((s, a) => s + a * a, 0));

describe.each([
  { label: "sim channel", model: "modelx-embed-3-small", size: 1536 },
  { label: "openai-kind channel", model: "modelx-embed-3-large", size: 3072 },
])("openai SDK embeddings, $label", ({ model, size }) => {
  test("a string, default encoding (base64 on the wire, decoded by the SDK)", async () => {
    const result = await rig.client.embeddings.create({ model, input: "The food was delicious" });
    expect(result.object).toBe("list");
    expect(result.model).toBe(model);
    const vector = result.data[0]?.embedding ?? [];
    expect(vector).toHaveLength(size);
    expect(norm(vector)).toBeCloseTo(1, 5);
    expect(result.usage.prompt_tokens).toBeGreaterThan(0);
  });

  test("explicit float equals the default's decoded vector", async () => {
    const float = await rig.client.embeddings.create({ model, input: "same text", encoding_format: "float" });
    const base64 = await rig.client.embeddings.create({ model, input: "same text" });
    expect(float.data[0]?.embedding).toEqual(base64.data[0]?.embedding ?? []);
  });

  test("an array of strings, in order", async () => {
    const result = await rig.client.embeddings.create({ model, input: ["a", "b", "a"] });
    expect(result.data.map((d) => d.index)).toEqual([0, 1, 2]);
    expect(result.data[0]?.embedding).toEqual(result.data[2]?.embedding ?? []);
    expect(result.data[0]?.embedding).not.toEqual(result.data[1]?.embedding ?? []);
  });

  test("token ids and token-id arrays", async () => {
    const one = await rig.client.embeddings.create({ model, input: [1212, 318, 257] });
    expect(one.data).toHaveLength(1);
    expect(one.usage.prompt_tokens).toBe(3);
    const many = await rig.client.embeddings.create({ model, input: [[1212, 318], [257]] });
    expect(many.data).toHaveLength(2);
    expect(many.usage.prompt_tokens).toBe(3);
  });

  test("dimensions", async () => {
    const result = await rig.client.embeddings.create({ model, input: "short", dimensions: 64 });
    const vector = result.data[0]?.embedding ?? [];
    expect(vector).toHaveLength(64);
    expect(norm(vector)).toBeCloseTo(1, 5);
  });

  test("a bad request is an SDK BadRequestError naming the field", async () => {
    const error = await rig.client.embeddings.create({ model, input: ["fine", ""] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe("input[1]");
  });
});
