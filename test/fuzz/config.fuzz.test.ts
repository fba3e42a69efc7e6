// Property tests of configuration loading (issue 17, fuzzing): any TOML file built from the known
// sections and keys with values of any type, any text at all as a file, and any MODELGATE_*
// variables either load or fail with a ConfigError naming the problem — never another error.
// Fixed seed (FUZZ_SEED overrides it).
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { ConfigError, loadConfig } from "../../src/config/load.ts";

const SEED = Number(process.env.FUZZ_SEED ?? 170_003);
const RUNS = 200;
const dir = mkdtempSync(join(tmpdir(), "modelgate-config-fuzz-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SECTIONS: Record<string, readonly string[]> = {
  server: [
    "listen",
    "http2",
    "shutdown_deadline_seconds",
    "trusted_proxies",
    "workers",
    "body_idle_timeout_seconds",
    "body_timeout_seconds",
    "tls_cert",
  ],
  store: ["url"],
  bootstrap: ["enabled", "balance_usd"],
  sim: ["seed"],
  metrics: ["enabled", "overhead_header", "allow_from", "token_env"],
  text: ["max_body_bytes", "keepalive_seconds"],
  admin: ["allow_from"],
  billing: ["day_utc_offset_minutes"],
};
const CHANNEL_KEYS = ["kind", "name", "base_url", "api_key_env", "models", "model_map", "priority", "weight"];

/** TOML values of every kind, including ones the schema must refuse. */
const tomlValue: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 30 }).map((s) => JSON.stringify(s)),
  fc.constantFrom(
    '"127.0.0.1:0"',
    '"[::1]:0"',
    '"sqlite://:memory:"',
    '"10.0.0.0/8"',
    '"openai-chat"',
    '"sim"',
    '"http://127.0.0.1:9"',
    '"*"',
    '"X_KEY"',
  ),
  fc.integer().map(String),
  fc
    .double({ noNaN: true, noDefaultInfinity: true })
    .map((d) => (Number.isInteger(d) ? `${d}.0` : String(d))),
  fc.constantFrom("inf", "-inf", "nan", "true", "false", "1979-05-27T07:32:00Z", "0x1f", "1_000"),
  fc
    .array(
      fc.string({ maxLength: 10 }).map((s) => JSON.stringify(s)),
      { maxLength: 3 },
    )
    .map((a) => `[${a.join(", ")}]`),
  fc.constant("{ a = 1 }"),
);

const section = fc.constantFrom(...Object.keys(SECTIONS)).chain((name) =>
  fc
    .uniqueArray(fc.oneof(fc.constantFrom(...(SECTIONS[name] ?? [])), fc.stringMatching(/^[a-z_]{1,12}$/)), {
      maxLength: 4,
    })
    .chain((keys) => fc.tuple(...keys.map((key) => tomlValue.map((value) => `${key} = ${value}`))))
    .map((lines) => `[${name}]\n${lines.join("\n")}\n`),
);

const channel = fc
  .uniqueArray(fc.constantFrom(...CHANNEL_KEYS), { maxLength: 6 })
  .chain((keys) => fc.tuple(...keys.map((key) => tomlValue.map((value) => `${key} = ${value}`))))
  .map((lines) => `[[channels]]\n${lines.join("\n")}\n`);

const configFile = fc
  .tuple(
    fc.uniqueArray(section, { maxLength: 4, selector: (s) => s.split("\n")[0] }),
    fc.array(channel, { maxLength: 2 }),
  )
  .map(([sections, channels]) => [...sections, ...channels].join("\n"));

const envVars = fc.dictionary(
  fc.constantFrom(
    "MODELGATE_LISTEN",
    "MODELGATE_WORKERS",
    "MODELGATE_DB",
    "MODELGATE_SIM_SEED",
    "MODELGATE_BOOTSTRAP",
    "MODELGATE_TRUSTED_PROXIES",
    "MODELGATE_NOPE",
  ),
  fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom("0", "2", "-1", "sqlite://x.db", "[::1]:0", "true")),
  { maxKeys: 3 },
);

let files = 0;

/** Loads `text` as the config file with `env`: the config, or the ConfigError's message. */
function load(text: string, env: Record<string, string>): { ok: true } | { ok: false; message: string } {
  const file = join(dir, `c${files++}.toml`);
  writeFileSync(file, text);
  try {
    loadConfig({ file, env, flags: {} });
    return { ok: true };
  } catch (thrown) {
    if (!(thrown instanceof ConfigError)) throw thrown;
    expect(thrown.message.trim()).not.toBe("");
    return { ok: false, message: thrown.message };
  }
}

describe("config files", () => {
  test("known sections with values of any type load or fail with a ConfigError", () => {
    fc.assert(
      fc.property(configFile, envVars, (text, env) => {
        load(text, env);
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  test("any text as a config file loads or fails with a ConfigError", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (text) => {
        load(text, {});
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  test("an unknown key is refused with its path", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...Object.keys(SECTIONS)),
        fc.stringMatching(/^zz_[a-z]{1,8}$/),
        (name, key) => {
          const result = load(`[${name}]\n${key} = 1\n`, {});
          expect(result).toMatchObject({ ok: false });
          expect(!result.ok && result.message).toContain(key);
        },
      ),
      { seed: SEED, numRuns: 50 },
    );
  });
});

describe("regressions found by these properties", () => {
  test("seed 170003: a USD amount past 2^53 nano-USD is a ConfigError, not a RangeError", () => {
    const result = load("[bootstrap]\nbalance_usd = 9007200\n", {});
    expect(result).toMatchObject({ ok: false });
    expect(!result.ok && result.message).toContain("bootstrap.balance_usd");
    expect(load('[bootstrap]\nbalance_usd = "9007199.254740991"\n', {})).toEqual({ ok: true });
  });
});
