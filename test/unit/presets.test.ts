// Upstream presets in the configuration (defaults filled, overrides kept, unknown names refused),
// base_url validation, the start-up warning for unset credential variables, and the Chat dialect
// rewrite each preset's quirks make (src/upstream/openai-chat/dialects.ts).
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { ConfigError, loadConfig } from "../../src/config/load.ts";
import { OPENAI_QUIRKS, PRESET_NAMES, PRESETS, resolveQuirks } from "../../src/config/presets.ts";
import type { ChannelConfig } from "../../src/config/schema.ts";
import { configWarnings } from "../../src/config/warnings.ts";
import { applyDialect } from "../../src/upstream/openai-chat/dialects.ts";
import { tempDir } from "../helpers/gateway.ts";

// Every file of this test in one folder, removed at the end.
const dir = tempDir("modelgate-presets-");
let files = 0;
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function load(toml: string) {
  const file = join(dir, `modelgate-${++files}.toml`);
  writeFileSync(file, toml);
  return loadConfig({ file, env: {}, flags: {} });
}

function errorOf(toml: string): string {
  try {
    load(toml);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error("expected a ConfigError");
}

function http(channel: ChannelConfig | undefined) {
  if (channel === undefined || channel.kind === "sim") throw new Error("expected an HTTP channel");
  return channel;
}

describe("presets in the configuration", () => {
  test("each preset fills kind, base_url and its credential variable", () => {
    for (const name of PRESET_NAMES) {
      const preset = PRESETS[name];
      const channel = http(
        load(`[[channels]]\npreset = "${name}"\nname = "x"\nmodels = ["*"]\n`).channels[0],
      );
      expect(channel.kind).toBe(preset.kind);
      expect(channel.base_url).toBe(preset.base_url);
      expect(channel.preset).toBe(name);
      expect(channel.api_key_env).toBe("api_key_env" in preset ? preset.api_key_env : undefined);
    }
  });

  test("the entry overrides what the preset fills; a named credential list replaces the default variable", () => {
    const channel = http(
      load(`[[channels]]
preset = "vllm"
name = "gpu"
base_url = "http://10.0.0.7:9000/v1"
api_key_envs = ["VLLM_KEY_A", "VLLM_KEY_B"]
models = ["modelx-5.4"]
model_map = { "modelx-5.4" = "Qwen/Qwen3-8B" }
quirks = { developer_role = true }
`).channels[0],
    );
    expect(channel).toMatchObject({ kind: "openai-chat", base_url: "http://10.0.0.7:9000/v1" });
    expect(channel.api_key_env).toBeUndefined();
    expect(channel.api_key_envs).toEqual(["VLLM_KEY_A", "VLLM_KEY_B"]);
    expect(resolveQuirks(channel.preset, channel.quirks)).toEqual({
      ...PRESETS.vllm.quirks,
      developer_role: true,
    });
    const hosted = http(load('[[channels]]\npreset = "openai"\nname = "o"\nmodels = ["*"]\n').channels[0]);
    expect(hosted.api_key_env).toBe("OPENAI_API_KEY");
  });

  test("an unknown preset names the known ones; an unknown quirk is refused with its path", () => {
    const message = errorOf('[[channels]]\npreset = "olama"\nname = "x"\nmodels = ["*"]\n');
    expect(message).toContain('channels[0].preset: unknown preset "olama"');
    expect(message).toContain("ollama, vllm, llamacpp, lmstudio");
    expect(
      errorOf('[[channels]]\npreset = "ollama"\nname = "x"\nmodels = ["*"]\nquirks = { dev = 1 }\n'),
    ).toContain("channels[0].quirks.dev: unknown field");
  });

  test("a channel without a preset still needs kind and base_url", () => {
    expect(errorOf('[[channels]]\nname = "x"\nmodels = ["*"]\n')).toContain("channels[0].kind");
    expect(errorOf('[[channels]]\nkind = "openai-chat"\nname = "x"\nmodels = ["*"]\n')).toContain(
      "channels[0].base_url",
    );
  });
});

describe("base_url validation", () => {
  test("a base_url without a scheme is refused at start with the field path and the fix", () => {
    const message = errorOf(
      '[[channels]]\nkind = "openai-chat"\nname = "x"\nbase_url = "localhost:11434/v1"\nmodels = ["*"]\n',
    );
    expect(message).toContain('channels[0].base_url: "localhost:11434/v1" is not an http(s) URL');
    expect(message).toContain("http://localhost:11434/v1");
    const bare = errorOf(
      '[[channels]]\npreset = "vllm"\nname = "x"\nbase_url = "gpu-box:8000/v1"\nmodels = ["*"]\n',
    );
    expect(bare).toContain("channels[0].base_url");
  });

  test("other schemes and hostless URLs are refused; http and https pass", () => {
    for (const url of ["ftp://example.com/v1", "http://", "file:///tmp/x", "api.openai.com/v1"]) {
      expect(
        errorOf(`[[channels]]\nkind = "openai-chat"\nname = "x"\nbase_url = "${url}"\nmodels = ["*"]\n`),
      ).toContain("channels[0].base_url");
    }
    for (const url of ["http://127.0.0.1:8000/v1", "https://api.example.com/v1", "http://[::1]:11434/v1"]) {
      const channel = http(
        load(`[[channels]]\nkind = "openai-chat"\nname = "x"\nbase_url = "${url}"\nmodels = ["*"]\n`)
          .channels[0],
      );
      expect(channel.base_url).toBe(url);
    }
  });
});

describe("start-up warnings", () => {
  const config = () =>
    load(`[[channels]]
preset = "openai"
name = "hosted"
models = ["modelx-5.5"]

[[channels]]
preset = "ollama"
name = "local"
models = ["modelx-5.4"]

[[channels]]
preset = "openrouter"
name = "router"
api_key_envs = ["OR_KEY_1", "OR_KEY_2"]
models = ["modelx-5.2"]
`);

  test("an unset credential variable is named with its channel and field path; a set one is not", () => {
    const warnings = configWarnings(config(), { OR_KEY_1: "sk-or-1", OR_KEY_2: "" });
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toContain("channels[0].api_key_env");
    expect(warnings[0]).toContain('OPENAI_API_KEY of channel "hosted" is not set');
    expect(warnings[1]).toContain(
      'channels[2].api_key_envs[1]: the environment variable OR_KEY_2 of channel "router"',
    );
  });

  test("a body idle timeout at or above the whole-body timeout is named", () => {
    const config = load("[server]\nbody_timeout_seconds = 5\n");
    const [warning] = configWarnings(config, {});
    expect(warning).toContain(
      "server.body_idle_timeout_seconds (15) is not shorter than server.body_timeout_seconds (5)",
    );
    expect(configWarnings(load("[server]\nbody_timeout_seconds = 20\n"), {})).toEqual([]);
  });

  test("no warning when every named variable is set; a channel that names none gets none", () => {
    expect(configWarnings(config(), { OPENAI_API_KEY: "sk", OR_KEY_1: "a", OR_KEY_2: "b" })).toEqual([]);
  });
});

const encode = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));
const decode = (body: string | Uint8Array) =>
  JSON.parse(typeof body === "string" ? body : new TextDecoder().decode(body)) as Record<string, unknown>;

const REQUEST = {
  model: "m",
  messages: [
    { role: "developer", content: "be brief" },
    { role: "user", content: "hi" },
  ],
  max_completion_tokens: 64,
  parallel_tool_calls: false,
  reasoning_effort: "low",
  stream: true,
  stream_options: { include_usage: true },
};

describe("Chat dialects", () => {
  test("OpenAI's own dialect sends the very bytes it was given", () => {
    const body = encode(REQUEST);
    expect(applyDialect(OPENAI_QUIRKS, body)).toBe(body);
  });

  test("Ollama: max_tokens, developer as system, parallel_tool_calls dropped, reasoning_effort kept", () => {
    const sent = decode(applyDialect(PRESETS.ollama.quirks, encode(REQUEST)));
    expect(sent.max_tokens).toBe(64);
    expect(sent.max_completion_tokens).toBeUndefined();
    expect(sent.messages).toEqual([
      { role: "system", content: "be brief" },
      { role: "user", content: "hi" },
    ]);
    expect("parallel_tool_calls" in sent).toBe(false);
    expect(sent.reasoning_effort).toBe("low");
    expect(sent.stream_options).toEqual({ include_usage: true });
  });

  test("given the parsed body, the same answer without a parse, and the caller's object unchanged", () => {
    const parsed = structuredClone(REQUEST);
    for (const quirks of [PRESETS.ollama.quirks, PRESETS.openrouter.quirks, PRESETS.deepseek.quirks]) {
      const body = encode(REQUEST);
      expect(decode(applyDialect(quirks, body, parsed))).toEqual(decode(applyDialect(quirks, body)));
    }
    expect(parsed).toEqual(REQUEST);
    // Nothing to change: the very bytes, even with the object given.
    const plain = { max_tokens: 5, messages: [{ role: "user", content: "hi" }] };
    const body = encode(plain);
    expect(applyDialect(PRESETS.ollama.quirks, body, plain)).toBe(body);
  });

  test("OpenRouter moves the effort into reasoning.effort, keeping other reasoning fields", () => {
    const sent = decode(
      applyDialect(PRESETS.openrouter.quirks, encode({ ...REQUEST, reasoning: { exclude: true } })),
    );
    expect(sent.reasoning).toEqual({ effort: "low", exclude: true });
    expect("reasoning_effort" in sent).toBe(false);
    expect(sent.parallel_tool_calls).toBe(false);
  });

  test("DeepSeek drops what it does not take; a client's max_tokens wins over the renamed field", () => {
    const sent = decode(applyDialect(PRESETS.deepseek.quirks, encode({ ...REQUEST, max_tokens: 10 })));
    expect(sent.max_tokens).toBe(10);
    expect("max_completion_tokens" in sent).toBe(false);
    expect("reasoning_effort" in sent).toBe(false);
    expect("parallel_tool_calls" in sent).toBe(false);
  });

  test("vLLM and llama.cpp take either cap field: sent as it came", () => {
    const sent = decode(applyDialect(PRESETS.vllm.quirks, encode(REQUEST)));
    expect(sent.max_completion_tokens).toBe(64);
    expect("max_tokens" in sent).toBe(false);
    const llama = decode(applyDialect(PRESETS.llamacpp.quirks, encode(REQUEST)));
    expect(llama.max_completion_tokens).toBe(64);
    expect("reasoning_effort" in llama).toBe(false);
  });

  test("max_completion_tokens quirk renames a legacy max_tokens", () => {
    const quirks = resolveQuirks(undefined, { max_tokens_field: "max_completion_tokens" });
    const sent = decode(applyDialect(quirks, JSON.stringify({ model: "m", messages: [], max_tokens: 5 })));
    expect(sent).toEqual({ model: "m", messages: [], max_completion_tokens: 5 });
  });

  test("a body none of the quirks touch is not rewritten", () => {
    const body = JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }], stream: false });
    expect(applyDialect(PRESETS.deepseek.quirks, body)).toBe(body);
    // A trigger word inside content parses the body but changes nothing: same bytes back.
    const mention = JSON.stringify({ model: "m", messages: [{ role: "user", content: '"developer"' }] });
    expect(applyDialect(PRESETS.ollama.quirks, mention)).toBe(mention);
  });
});

describe("docs/upstreams.md", () => {
  const doc = readFileSync(join(import.meta.dir, "../../docs/upstreams.md"), "utf8");
  const blocks = [...doc.matchAll(/```toml\n([\s\S]*?)```/g)].map((m) => m[1] ?? "");

  test("every worked example is a valid configuration, and every preset has one", () => {
    const shown = new Set<string>();
    for (const block of blocks) {
      for (const channel of load(block).channels) {
        const c = http(channel);
        expect(c.preset).toBeDefined();
        shown.add(String(c.preset));
      }
    }
    expect([...shown].sort()).toEqual([...PRESET_NAMES].sort());
  });

  test("the base_url error quoted in the docs is the one the gateway gives", () => {
    const message = errorOf(
      '[[channels]]\npreset = "ollama"\nname = "x"\nbase_url = "localhost:11434/v1"\nmodels = ["*"]\n',
    );
    const quoted = /`(channels\[0\]\.base_url: [^`]*?) …`/.exec(doc)?.[1];
    expect(quoted).toBeDefined();
    expect(message).toContain(quoted ?? "");
  });
});

describe("Chat dialects, property-based (fast-check, seed 14)", () => {
  const role = fc.constantFrom("system", "developer", "user", "assistant", "tool");
  const message = fc.record({ role, content: fc.string() });
  const body = fc.record(
    {
      model: fc.string(),
      messages: fc.array(message, { maxLength: 5 }),
      max_tokens: fc.nat(),
      max_completion_tokens: fc.nat(),
      parallel_tool_calls: fc.boolean(),
      reasoning_effort: fc.constantFrom("low", "medium", "high", null),
      reasoning: fc.record({ exclude: fc.boolean() }),
      stream: fc.boolean(),
    },
    { requiredKeys: ["model", "messages"] },
  );
  const quirks = fc.record({
    max_tokens_field: fc.constantFrom("max_tokens", "max_completion_tokens", "either"),
    developer_role: fc.boolean(),
    parallel_tool_calls: fc.boolean(),
    reasoning_effort: fc.constantFrom("reasoning_effort", "reasoning.effort", "drop"),
  } as const);

  test("the rewritten body keeps every message's content and the cap, and holds no field the server does not read", () => {
    fc.assert(
      fc.property(quirks, body, (q, input) => {
        const sent = decode(applyDialect(q, JSON.stringify(input)));
        expect((sent.messages as { content: string }[]).map((m) => m.content)).toEqual(
          input.messages.map((m) => m.content),
        );
        const roles = (sent.messages as { role: string }[]).map((m) => m.role);
        if (!q.developer_role) expect(roles).not.toContain("developer");
        const cap = input.max_tokens ?? input.max_completion_tokens;
        if (q.max_tokens_field === "max_tokens") {
          expect("max_completion_tokens" in sent).toBe(false);
          expect(sent.max_tokens).toBe(cap);
        }
        if (q.max_tokens_field === "max_completion_tokens") {
          expect("max_tokens" in sent).toBe(false);
          expect(sent.max_completion_tokens).toBe(input.max_completion_tokens ?? input.max_tokens);
        }
        if (!q.parallel_tool_calls) expect("parallel_tool_calls" in sent).toBe(false);
        if (q.reasoning_effort !== "reasoning_effort") expect("reasoning_effort" in sent).toBe(false);
        const effort = input.reasoning_effort;
        if (q.reasoning_effort === "reasoning.effort" && effort !== undefined && effort !== null)
          expect((sent.reasoning as { effort?: string }).effort).toBe(effort);
      }),
      { seed: 14, numRuns: 500 },
    );
  });
});
