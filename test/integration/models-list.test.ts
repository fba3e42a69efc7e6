// GET /v1/models lists what a key can reach: the models its group allows AND a configured channel
// can serve (a text channel for text and messages models, an images channel for image models);
// a model no channel serves would only answer 503, so it is neither listed nor found by id. Codex's
// catalog form (`?client_version=`) lists the same models in Codex's shape, and leaves the OpenAI
// and Anthropic list shapes untouched for everyone else.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createKey, type RunningGateway, startGateway } from "../helpers/gateway.ts";
import { keyAccepted } from "../helpers/wait.ts";

let gw: RunningGateway;

// Nothing listens on port 9: listing needs no upstream call, only the configuration.
const CONFIG = `
[[channels]]
kind = "openai-chat"
name = "chat"
base_url = "http://127.0.0.1:9/v1"
models = ["modelx-5.4", "modelx-5.4-mini"]

[[channels]]
kind = "anthropic"
name = "messages"
base_url = "http://127.0.0.1:9"
models = ["modelz-sonnet-4-6"]

# An images channel does not make modelx-5.5 reachable: it cannot answer text requests.
[[channels]]
kind = "openai-images"
name = "images"
base_url = "http://127.0.0.1:9/v1"
models = ["modelx-image-2", "modelx-5.5"]
`;

interface OpenAIList {
  object: string;
  data: { id: string; object: string; created: number; owned_by: string }[];
}

const get = (path: string, headers: Record<string, string>) => fetch(`${gw.url}${path}`, { headers });

beforeAll(async () => {
  gw = await startGateway({ config: CONFIG });
}, 30_000);
afterAll(async () => {
  await gw.dispose();
}, 30_000);

describe("GET /v1/models lists what the key can reach", () => {
  test("the bootstrap key (every model allowed) sees only models a suitable channel serves", async () => {
    const response = await get("/v1/models", { authorization: `Bearer ${gw.key}` });
    expect(response.status).toBe(200);
    const body = (await response.json()) as OpenAIList;
    expect(body.object).toBe("list");
    expect(body.data.map((m) => m.id)).toEqual([
      "modelx-5.4",
      "modelx-5.4-mini",
      "modelx-image-2",
      "modelz-sonnet-4-6",
    ]);
    for (const model of body.data)
      expect(Object.keys(model).sort()).toEqual(["created", "id", "object", "owned_by"]);
  });

  test("a group narrows it further; the Anthropic shape lists the same ids", async () => {
    expect(
      (await gw.cli(["groups", "set", "minis", "--models", "modelx-5.4-mini,modelx-5.5,modelz-*"])).code,
    ).toBe(0);
    const { secret } = await createKey(gw, ["--account", "default", "--group", "minis", "--name", "minis"]);
    await keyAccepted(gw.url, secret);
    const openai = (await (
      await get("/v1/models", { authorization: `Bearer ${secret}` })
    ).json()) as OpenAIList;
    expect(openai.data.map((m) => m.id)).toEqual(["modelx-5.4-mini", "modelz-sonnet-4-6"]);
    const anthropic = (await (
      await get("/v1/models", { "x-api-key": secret, "anthropic-version": "2023-06-01" })
    ).json()) as { data: { id: string }[]; has_more: boolean };
    expect(anthropic.data.map((m) => m.id)).toEqual(["modelx-5.4-mini", "modelz-sonnet-4-6"]);
    expect(anthropic.has_more).toBe(false);
  });

  test("GET /v1/models/{id} of an allowed model no channel serves is 404, not a listing that 503s later", async () => {
    const auth = { authorization: `Bearer ${gw.key}` };
    expect((await get("/v1/models/modelx-5.4", auth)).status).toBe(200);
    const missing = await get("/v1/models/modelx-5.5", auth);
    expect(missing.status).toBe(404);
    const body = (await missing.json()) as { error: { message: string; code: string } };
    expect(body.error.code).toBe("model_not_found");
    expect(body.error.message).toContain("not served by any configured channel");
  });

  test("GET /v1/models/{id} decodes its id once: a doubly escaped one is 404 model_not_found, not a 500", async () => {
    const response = await get("/v1/models/modelx-5.4%25E0%25A4%25A", { authorization: `Bearer ${gw.key}` });
    expect(response.status).toBe(404);
    const body = (await response.json()) as { error: { code: string } };
    expect(body.error.code).toBe("model_not_found");
    // Decoded once: an escaped character of a real id still finds it.
    expect((await get("/v1/models/modelx%2D5.4", { authorization: `Bearer ${gw.key}` })).status).toBe(200);
  });

  test("Codex's catalog form lists the same text models in Codex's shape", async () => {
    const response = await get("/v1/models?client_version=0.169.0", { authorization: `Bearer ${gw.key}` });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { models: Record<string, unknown>[] };
    expect(body.models.map((m) => m.slug)).toEqual(["modelx-5.4", "modelx-5.4-mini", "modelz-sonnet-4-6"]);
    const first = body.models[0] ?? {};
    // The fields Codex 0.169 refuses a catalog without (openai/codex openai_models.rs ModelInfo).
    for (const field of [
      "slug",
      "display_name",
      "description",
      "supported_reasoning_levels",
      "shell_type",
      "visibility",
      "supported_in_api",
      "priority",
      "availability_nux",
      "upgrade",
      "support_verbosity",
      "default_verbosity",
      "apply_patch_tool_type",
      "truncation_policy",
      "experimental_supported_tools",
      "base_instructions",
    ]) {
      expect(first).toHaveProperty(field);
    }
    expect(first).toMatchObject({ context_window: 1_050_000, visibility: "list", supported_in_api: true });
    expect(typeof first.base_instructions).toBe("string");
  });
});
