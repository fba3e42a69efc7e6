// Claude Code (`@anthropic-ai/claude-code`, installed in test/compat/clis/) headless against the
// gateway: ANTHROPIC_BASE_URL is the gateway root (no /v1); the key goes in ANTHROPIC_AUTH_TOKEN
// (Bearer) or ANTHROPIC_API_KEY (x-api-key). It runs once with a messages-family model on an
// Anthropic upstream and once with a modelx text model on a Responses upstream (translated), each
// completing a turn that uses the Bash tool and a final answer after the tool result.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { MODEL_BY_UPSTREAM, startTranslateRig, type TranslateRig } from "../integration/translate-setup.ts";
import { BIN, baseEnv, run, type Sandbox, sandbox } from "./cli-setup.ts";

let rig: TranslateRig;
let box: Sandbox;
beforeAll(async () => {
  rig = await startTranslateRig();
  box = sandbox("claude");
}, 30_000);
afterAll(async () => {
  await rig?.stop();
  box?.dispose();
}, 30_000);

function claudeEnv(model: string, auth: "token" | "api-key"): Record<string, string> {
  const key = rig.gw.key ?? "";
  return {
    ...baseEnv(box.home),
    ANTHROPIC_BASE_URL: rig.gw.url,
    ...(auth === "token" ? { ANTHROPIC_AUTH_TOKEN: key } : { ANTHROPIC_API_KEY: key }),
    ANTHROPIC_MODEL: model,
    ANTHROPIC_DEFAULT_HAIKU_MODEL: model,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_TELEMETRY: "1",
    DISABLE_ERROR_REPORTING: "1",
    CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY: "1",
  };
}

interface ClaudeResult {
  is_error: boolean;
  subtype: string;
  num_turns: number;
  result: string;
  usage: { input_tokens: number; output_tokens: number };
}

async function claude(model: string, auth: "token" | "api-key", prompt: string): Promise<ClaudeResult> {
  const args = [`${BIN}/claude`, "-p", prompt, "--output-format", "json", "--allowedTools", "Bash"];
  const out = await run(args, box.work, claudeEnv(model, auth));
  expect(out.stderr).not.toContain("API Error");
  expect(out.code).toBe(0);
  return JSON.parse(out.stdout) as ClaudeResult;
}

describe.each([
  {
    label: "messages-family model, Anthropic upstream, Bearer token",
    model: MODEL_BY_UPSTREAM.messages,
    auth: "token" as const,
  },
  {
    label: "modelx text model, Responses upstream (translated), x-api-key",
    model: MODEL_BY_UPSTREAM.responses,
    auth: "api-key" as const,
  },
])("Claude Code: $label", ({ model, auth }) => {
  test("a plain headless answer completes", async () => {
    const result = await claude(model, auth, "Say hello in one sentence.");
    expect(result.is_error).toBe(false);
    expect(result.subtype).toBe("success");
    expect(result.result.length).toBeGreaterThan(10);
    expect(result.usage.output_tokens).toBeGreaterThan(0);
  }, 120_000);

  test("a turn with the Bash tool completes: tool call, tool result, final answer", async () => {
    const result = await claude(model, auth, "Please use the Bash tool to look around.");
    expect(result.is_error).toBe(false);
    expect(result.num_turns).toBeGreaterThanOrEqual(2);
    expect(result.result).toContain("The tool returned");
  }, 120_000);
});
