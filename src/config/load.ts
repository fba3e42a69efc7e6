// Builds the runtime configuration in one step from a TOML file, MODELGATE_* variables and flags.
// Each setting may come from one source; two sources that disagree are an error naming both.
import { readFileSync } from "node:fs";
import * as v from "valibot";
import { describeIssue, issuePath } from "../base/validation.ts";
import { aliasProblems } from "./aliases.ts";
import { type Config, ConfigSchema } from "./schema.ts";

export class ConfigError extends Error {
  override name = "ConfigError";
}

/** A variable's text, or a flag's value as the command line parser gives it. */
type Raw = string | boolean | string[];
type FlagValue = Raw | undefined;

interface Setting {
  path: readonly string[];
  env: string;
  flag: string;
  /** Turns the text of a variable into the value the schema expects. */
  parse: (raw: Raw) => unknown;
  /** The same for the flag's value (they differ for a `no-` flag only). */
  flagParse: (raw: Raw) => unknown;
}

const text = (raw: Raw): unknown => (Array.isArray(raw) ? raw.join(",") : raw);
const numberish = (raw: Raw): unknown => {
  const s = text(raw);
  return typeof s === "string" && s.trim() !== "" && Number.isFinite(Number(s)) ? Number(s) : s;
};
const list = (raw: Raw): unknown =>
  (Array.isArray(raw) ? raw : String(raw).split(",")).map((s) => s.trim()).filter((s) => s.length > 0);
const boolish = (raw: Raw): unknown => {
  if (typeof raw === "boolean") return raw;
  const s = String(raw).toLowerCase();
  if (["1", "true", "yes", "on"].includes(s)) return true;
  if (["0", "false", "no", "off"].includes(s)) return false;
  return s;
};

/** The dotted paths of the config's sections' fields (`server.listen`), which a variable or flag may set. */
type SettingPath = {
  [S in keyof Config]: Config[S] extends readonly unknown[] ? never : `${S}.${keyof Config[S] & string}`;
}[keyof Config];

/** One row of the table: the variable, the flag and how their text becomes the schema's input. */
interface SettingRow {
  env: `MODELGATE_${string}`;
  flag: string;
  parse: (raw: Raw) => unknown;
}

/**
 * Settings that variables and flags may set: config path → variable, flag, parser. tsc checks each
 * path against Config. A `no-` flag (`--no-bootstrap`) is present or absent: present, it sets its
 * setting to false (the variable is still read as a boolean).
 */
const SETTING_ROWS = {
  "server.listen": { env: "MODELGATE_LISTEN", flag: "listen", parse: text },
  "server.tls_cert": { env: "MODELGATE_TLS_CERT", flag: "tls-cert", parse: text },
  "server.tls_key": { env: "MODELGATE_TLS_KEY", flag: "tls-key", parse: text },
  "server.trusted_proxies": { env: "MODELGATE_TRUSTED_PROXIES", flag: "trusted-proxy", parse: list },
  "server.shutdown_deadline_seconds": {
    env: "MODELGATE_SHUTDOWN_DEADLINE",
    flag: "shutdown-deadline",
    parse: numberish,
  },
  "server.workers": { env: "MODELGATE_WORKERS", flag: "workers", parse: numberish },
  "server.log_format": { env: "MODELGATE_LOG_FORMAT", flag: "log-format", parse: text },
  "server.log_level": { env: "MODELGATE_LOG_LEVEL", flag: "log-level", parse: text },
  "server.stage_trace": { env: "MODELGATE_STAGE_TRACE", flag: "stage-trace", parse: text },
  "store.url": { env: "MODELGATE_DB", flag: "db", parse: text },
  "store.journal": { env: "MODELGATE_JOURNAL", flag: "journal", parse: text },
  "store.pool_size": { env: "MODELGATE_DB_POOL_SIZE", flag: "db-pool-size", parse: numberish },
  "redis.url": { env: "MODELGATE_REDIS_URL", flag: "redis-url", parse: text },
  "redis.prefix": { env: "MODELGATE_REDIS_PREFIX", flag: "redis-prefix", parse: text },
  "redis.timeout_ms": { env: "MODELGATE_REDIS_TIMEOUT_MS", flag: "redis-timeout-ms", parse: numberish },
  "bootstrap.enabled": { env: "MODELGATE_BOOTSTRAP", flag: "no-bootstrap", parse: boolish },
  "sim.seed": { env: "MODELGATE_SIM_SEED", flag: "seed", parse: numberish },
  "telemetry.otlp_endpoint": { env: "MODELGATE_OTLP_ENDPOINT", flag: "otlp-endpoint", parse: text },
  "telemetry.sampling_ratio": {
    env: "MODELGATE_OTLP_SAMPLING_RATIO",
    flag: "otlp-sampling-ratio",
    parse: numberish,
  },
} as const satisfies { [P in SettingPath]?: SettingRow };

/** A flag some setting is read from (`serve` defines each one). */
export type SettingFlag = (typeof SETTING_ROWS)[keyof typeof SETTING_ROWS]["flag"];

export const SETTINGS: readonly Setting[] = Object.entries(SETTING_ROWS).map(([path, row]) => {
  const flagParse = row.flag.startsWith("no-") ? (raw: Raw) => !raw : row.parse;
  return { path: path.split("."), env: row.env, flag: row.flag, parse: row.parse, flagParse };
});

/** Variables read by commands other than through SETTINGS; any other MODELGATE_* is a typo. */
const OTHER_ENV = new Set(["MODELGATE_CONFIG", "MODELGATE_ADMIN_URL", "MODELGATE_ADMIN_TOKEN"]);
/**
 * Set by `serve --workers` on its own worker processes (src/cluster/), or by tests (a node's clock
 * shifted: src/limits/open.ts); not for operators.
 */
const INTERNAL_ENV = new Set(["MODELGATE_WORKER", "MODELGATE_WORKER_PORT", "MODELGATE_TEST_CLOCK_OFFSET_MS"]);

export interface ConfigSources {
  /** Path of a TOML file, from `--config` or MODELGATE_CONFIG. */
  file?: string | undefined;
  env: Readonly<Record<string, string | undefined>>;
  flags: Readonly<Record<string, FlagValue>>;
}

/** Reads, merges and validates the configuration; throws ConfigError with every problem named. */
export function loadConfig(sources: ConfigSources): Config {
  const raw: Record<string, unknown> = sources.file ? readToml(sources.file) : {};
  const origin = new Map<string, string>();
  const fileLabel = `config file ${sources.file}`;
  for (const setting of SETTINGS) {
    const key = setting.path.join(".");
    if (getPath(raw, setting.path) !== undefined) origin.set(key, fileLabel);
  }

  const problems: string[] = [];
  for (const name of Object.keys(sources.env)) {
    if (!name.startsWith("MODELGATE_") || OTHER_ENV.has(name) || INTERNAL_ENV.has(name)) continue;
    if (!SETTINGS.some((s) => s.env === name)) {
      problems.push(`${name}: unknown environment variable; known ones are ${knownEnv().join(", ")}`);
    }
  }
  for (const setting of SETTINGS) {
    const envRaw = sources.env[setting.env];
    if (envRaw !== undefined) apply(raw, origin, setting, setting.parse(envRaw), setting.env, problems);
    const flagRaw = sources.flags[setting.flag];
    if (flagRaw !== undefined && flagRaw !== false) {
      apply(raw, origin, setting, setting.flagParse(flagRaw), `--${setting.flag}`, problems);
    }
  }
  if (problems.length > 0) throw new ConfigError(problems.join("\n"));

  const result = v.safeParse(ConfigSchema, raw);
  if (!result.success) {
    const lines = result.issues.map((issue) => {
      const from = origin.get(issuePath(issue));
      return from && from !== fileLabel ? `${describeIssue(issue)} (set by ${from})` : describeIssue(issue);
    });
    throw new ConfigError(lines.join("\n"));
  }
  const config = result.output;
  if ((config.server.tls_cert === undefined) !== (config.server.tls_key === undefined)) {
    throw new ConfigError("server.tls_cert and server.tls_key go together: set both for HTTPS, or neither");
  }
  if (config.server.workers > 1 && config.store.url === "sqlite://:memory:") {
    throw new ConfigError(
      `server.workers: ${config.server.workers} processes cannot share an in-memory store (sqlite://:memory:); use a SQLite file, or 1 worker`,
    );
  }
  if (config.server.workers > 1 && !config.store.url.startsWith("sqlite://")) {
    throw new ConfigError(
      `server.workers: ${config.server.workers} worker processes run on a SQLite store only; on PostgreSQL run several nodes (plain serve processes, docs/cluster.md), each with 1 worker`,
    );
  }
  const aliasErrors = aliasProblems(config.aliases);
  if (aliasErrors.length > 0) throw new ConfigError(aliasErrors.join("\n"));
  const names = new Set<string>();
  for (const [i, channel] of config.channels.entries()) {
    if (names.has(channel.name))
      throw new ConfigError(`channels[${i}].name: "${channel.name}" is used twice`);
    names.add(channel.name);
  }
  return config;
}

function apply(
  raw: Record<string, unknown>,
  origin: Map<string, string>,
  setting: Setting,
  value: unknown,
  label: string,
  problems: string[],
): void {
  const key = setting.path.join(".");
  const previous = getPath(raw, setting.path);
  const previousOrigin = origin.get(key);
  if (previous !== undefined && previousOrigin && JSON.stringify(previous) !== JSON.stringify(value)) {
    problems.push(
      `${key} is set twice with different values: ${previousOrigin} says ${JSON.stringify(previous)}, ${label} says ${JSON.stringify(value)}; keep one`,
    );
    return;
  }
  setPath(raw, setting.path, value);
  origin.set(key, label);
}

function readToml(path: string): Record<string, unknown> {
  return readTomlFile(path, `config file ${path}`, (message) => new ConfigError(message));
}

/**
 * A TOML file's top table; a file that cannot be read or parsed becomes `fail("cannot read LABEL:
 * …")` or `fail("LABEL is not valid TOML: …")` (the config file and `sim --profile` both read so).
 */
export function readTomlFile(
  path: string,
  label: string,
  fail: (message: string) => Error,
): Record<string, unknown> {
  let source: string;
  try {
    source = readFileSync(path, "utf8");
  } catch (error) {
    throw fail(`cannot read ${label}: ${messageOf(error)}`);
  }
  try {
    const parsed: unknown = Bun.TOML.parse(source);
    if (typeof parsed !== "object" || parsed === null) throw new Error("not a table");
    return parsed as Record<string, unknown>;
  } catch (error) {
    throw fail(`${label} is not valid TOML: ${messageOf(error)}`);
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function getPath(obj: Record<string, unknown>, path: readonly string[]): unknown {
  let node: unknown = obj;
  for (const part of path) {
    if (typeof node !== "object" || node === null) return undefined;
    node = (node as Record<string, unknown>)[part];
  }
  return node;
}

function setPath(obj: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let node = obj;
  for (const part of path.slice(0, -1)) {
    const next = node[part];
    if (typeof next !== "object" || next === null) node[part] = {};
    node = node[part] as Record<string, unknown>;
  }
  const last = path.at(-1);
  if (last !== undefined) node[last] = value;
}

function knownEnv(): string[] {
  return [...SETTINGS.map((s) => s.env), ...OTHER_ENV].sort();
}
