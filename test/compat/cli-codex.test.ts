// Codex (`@openai/codex`, installed in test/compat/clis/; its binary ships inside the npm package)
// non-interactive (`codex exec`) against the gateway through a custom model provider with
// base_url = gateway /v1 and wire_api = "responses". It runs over HTTP streaming with a modelz
// model on an Anthropic upstream (translated), and over the WebSocket mode
// (supports_websockets = true) with a modelx model on a Chat upstream (translated); each run
// completes a turn with the exec_command tool and a final answer after the tool output.
// Model metadata: with `[features] api_key_model_discovery = true` and the provider's
// `model_catalog_url` at the gateway's /v1/models, Codex reads the gateway's catalog
// (`?client_version=…`) and runs without the "Model metadata … not found" warning it prints
// without them (checked too, so the test would notice if Codex stopped printing it).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { MODEL_BY_UPSTREAM, startTranslateRig, type TranslateRig } from "../integration/translate-setup.ts";
import { BIN, baseEnv, run, type Sandbox, sandbox } from "./cli-setup.ts";

let rig: TranslateRig;
let box: Sandbox;
beforeAll(async () => {
  rig = await startTranslateRig();
  // Codex makes its daemon folder in /tmp whatever TMPDIR says.
  box = sandbox("codex", [join("/tmp", `codex-daemon-${process.getuid?.() ?? 0}`)]);
}, 30_000);
afterAll(async () => {
  await rig?.stop();
  box?.dispose();
}, 30_000);

const METADATA_WARNING = "Defaulting to fallback metadata";

function writeConfig(model: string, websockets: boolean, catalog: boolean): string {
  const codexHome = join(box.home, `${websockets ? "codex-ws" : "codex-http"}${catalog ? "" : "-nocat"}`);
  mkdirSync(codexHome, { recursive: true });
  writeFileSync(
    join(codexHome, "config.toml"),
    `model = "${model}"
model_provider = "modelgate"
approval_policy = "never"
sandbox_mode = "read-only"
check_for_update_on_startup = false

[analytics]
enabled = false
${catalog ? "\n[features]\napi_key_model_discovery = true\n" : ""}
[feedback]
enabled = false

[model_providers.modelgate]
name = "modelgate"
base_url = "${rig.gw.url}/v1"
env_key = "MODELGATE_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
supports_websockets = ${websockets}
${catalog ? `model_catalog_url = "${rig.gw.url}/v1/models"` : ""}
`,
  );
  return codexHome;
}

async function codex(model: string, websockets: boolean, prompt: string, catalog = true) {
  const env = {
    ...baseEnv(box.home),
    CODEX_HOME: writeConfig(model, websockets, catalog),
    MODELGATE_API_KEY: rig.gw.key ?? "",
  };
  const args = [`${BIN}/codex`, "exec", "--skip-git-repo-check", prompt];
  const out = await run(args, box.work, env);
  expect(out.code).toBe(0);
  return out;
}

describe.each([
  {
    label: "HTTP streaming, modelz model on an Anthropic upstream",
    model: MODEL_BY_UPSTREAM.messages,
    ws: false,
  },
  { label: "WebSocket mode, modelx model on a Chat upstream", model: MODEL_BY_UPSTREAM.chat, ws: true },
])("Codex exec: $label", ({ model, ws }) => {
  test("a plain answer completes", async () => {
    const before = (rig.gw.logs().match(/responses websocket opened/g) ?? []).length;
    const out = await codex(model, ws, "Say hello in one sentence.");
    expect(out.stdout.trim().length).toBeGreaterThan(10);
    expect(out.stderr).not.toContain("stream closed before response.completed");
    expect(out.stderr).not.toContain(METADATA_WARNING);
    const after = (rig.gw.logs().match(/responses websocket opened/g) ?? []).length;
    expect(after > before).toBe(ws);
  }, 120_000);

  test("a turn with the exec_command tool completes: call, tool output, final answer", async () => {
    const out = await codex(model, ws, "Please run exec_command to look around.");
    expect(out.stderr).toContain("exec");
    expect(out.stdout).toContain("The tool returned");
    expect(out.stderr).not.toContain("failed to parse function arguments");
    expect(out.stderr).not.toContain(METADATA_WARNING);
  }, 120_000);

  test("without the catalog settings Codex falls back and says so (the warning the catalog removes)", async () => {
    const out = await codex(model, ws, "Say hello in one sentence.", false);
    expect(out.stderr).toContain(`Model metadata for \`${model}\` not found. ${METADATA_WARNING}`);
  }, 120_000);
});
