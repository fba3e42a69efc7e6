import { afterAll, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { profileFrom } from "../../src/cli/sim.ts";
import { UsageError } from "../../src/cli/usage-error.ts";
import { ConfigError, loadConfig } from "../../src/config/load.ts";
import { tempDir } from "../helpers/gateway.ts";

// Every file of this test in one folder, removed at the end.
const dir = tempDir("modelgate-config-");
let files = 0;
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function withFile(toml: string): string {
  const file = join(dir, `modelgate-${++files}.toml`);
  writeFileSync(file, toml);
  return file;
}

function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error("expected a ConfigError");
}

describe("configuration", () => {
  test("no configuration at all gives working defaults: SQLite in the working directory, the simulator for every model", () => {
    const config = loadConfig({ env: {}, flags: {} });
    expect(config.server.listen).toBe("127.0.0.1:8080");
    expect(config.store.url).toBe("sqlite://modelgate.db");
    expect(config.bootstrap).toEqual({ enabled: true, balance_usd: "10" });
    expect(config.channels).toMatchObject([{ kind: "sim", name: "simulator", models: ["*"] }]);
  });

  test("an unknown field is rejected with its exact path", () => {
    const file = withFile('[server]\nlisten = "127.0.0.1:9000"\nlistne = "x"\n');
    expect(errorOf(() => loadConfig({ file, env: {}, flags: {} }))).toContain("server.listne: unknown field");
    const nested = withFile('[[channels]]\nkind = "sim"\nname = "a"\nmodel = ["*"]\n');
    expect(errorOf(() => loadConfig({ file: nested, env: {}, flags: {} }))).toContain(
      "channels[0].model: unknown field",
    );
  });

  test("wrong values name the field and the source that set them", () => {
    expect(errorOf(() => loadConfig({ env: { MODELGATE_LISTEN: "nowhere" }, flags: {} }))).toContain(
      "server.listen: expected HOST:PORT",
    );
    expect(errorOf(() => loadConfig({ env: { MODELGATE_LISTEN: "nowhere" }, flags: {} }))).toContain(
      "MODELGATE_LISTEN",
    );
    const file = withFile('[server]\ntrusted_proxies = ["10.0.0.0/33"]\n');
    expect(errorOf(() => loadConfig({ file, env: {}, flags: {} }))).toContain("server.trusted_proxies[0]");
  });

  test("two sources setting the same thing differently is an error naming both; the same value is fine", () => {
    const file = withFile('[server]\nlisten = "127.0.0.1:9000"\n');
    const message = errorOf(() => loadConfig({ file, env: {}, flags: { listen: "127.0.0.1:9001" } }));
    expect(message).toContain("server.listen is set twice");
    expect(message).toContain("--listen");
    expect(message).toContain(file);
    expect(
      errorOf(() => loadConfig({ env: { MODELGATE_DB: "sqlite://a.db" }, flags: { db: "sqlite://b.db" } })),
    ).toContain("MODELGATE_DB");
    expect(loadConfig({ file, env: { MODELGATE_LISTEN: "127.0.0.1:9000" }, flags: {} }).server.listen).toBe(
      "127.0.0.1:9000",
    );
  });

  test("variables and flags set their settings", () => {
    const config = loadConfig({
      env: { MODELGATE_TRUSTED_PROXIES: "10.0.0.0/8, ::1/128", MODELGATE_SHUTDOWN_DEADLINE: "5" },
      flags: { "no-bootstrap": true, seed: "7" },
    });
    expect(config.server.trusted_proxies).toEqual(["10.0.0.0/8", "::1/128"]);
    expect(config.server.shutdown_deadline_seconds).toBe(5);
    expect(config.bootstrap.enabled).toBe(false);
    expect(config.sim.seed).toBe(7);
  });

  test("an unknown MODELGATE_ variable is a typo, reported with the known names", () => {
    expect(errorOf(() => loadConfig({ env: { MODELGATE_LISTN: "x" }, flags: {} }))).toContain(
      "MODELGATE_LISTN: unknown environment variable",
    );
  });

  test("TLS needs both certificate and key; channels need unique names and known models", () => {
    const half = withFile('[server]\ntls_cert = "cert.pem"\n');
    expect(errorOf(() => loadConfig({ file: half, env: {}, flags: {} }))).toContain("tls_key");
    const twice = withFile(
      '[[channels]]\nkind = "sim"\nname = "a"\n[[channels]]\nkind = "sim"\nname = "a"\n',
    );
    expect(errorOf(() => loadConfig({ file: twice, env: {}, flags: {} }))).toContain(
      'channels[1].name: "a" is used twice',
    );
    const control = withFile('[[channels]]\nkind = "sim"\nname = "a\\u001b[2J"\n');
    expect(errorOf(() => loadConfig({ file: control, env: {}, flags: {} }))).toContain(
      "channels[0].name: must not contain control characters (U+001B at character 2)",
    );
    const unknownModel = withFile('[[channels]]\nkind = "sim"\nname = "a"\nmodels = ["gpt-4"]\n');
    expect(errorOf(() => loadConfig({ file: unknownModel, env: {}, flags: {} }))).toContain(
      "channels[0].models[0]",
    );
  });

  test("server.workers: 1 by default; from file, MODELGATE_WORKERS or --workers; a whole number of at least 1, never with an in-memory store", () => {
    expect(loadConfig({ env: {}, flags: {} }).server.workers).toBe(1);
    expect(loadConfig({ env: { MODELGATE_WORKERS: "4" }, flags: {} }).server.workers).toBe(4);
    expect(loadConfig({ env: {}, flags: { workers: "2" } }).server.workers).toBe(2);
    expect(errorOf(() => loadConfig({ env: {}, flags: { workers: "0" } }))).toContain("server.workers");
    expect(errorOf(() => loadConfig({ env: {}, flags: { workers: "0" } }))).toContain("--workers");
    expect(errorOf(() => loadConfig({ env: { MODELGATE_WORKERS: "1.5" }, flags: {} }))).toContain(
      "MODELGATE_WORKERS",
    );
    const memory = { db: "sqlite://:memory:", workers: "2" };
    expect(errorOf(() => loadConfig({ env: {}, flags: memory }))).toContain(
      "server.workers: 2 processes cannot share an in-memory store",
    );
  });

  test("a file that is not TOML is reported as such", () => {
    const file = withFile("[server\nlisten=");
    expect(errorOf(() => loadConfig({ file, env: {}, flags: {} }))).toContain("not valid TOML");
  });

  test("the config file and sim --profile name an unreadable or non-TOML file alike", () => {
    const missing = join(dir, "absent.toml");
    expect(errorOf(() => loadConfig({ file: missing, env: {}, flags: {} }))).toStartWith(
      `cannot read config file ${missing}: `,
    );
    const bad = withFile("rate_500 = ");
    expect(() => profileFrom(missing, [])).toThrow(new RegExp(`^--profile: cannot read ${missing}: `));
    expect(() => profileFrom(bad, [])).toThrow(new RegExp(`^--profile: ${bad} is not valid TOML: `));
    expect(() => profileFrom(bad, [])).toThrow(UsageError);
  });
});
