// Builds the runtime configuration in one step from a TOML file, MODELGATE_* variables and flags.
// Each setting may come from one source; two sources that disagree are an error naming both.
import { readFileSync } from "node:fs";
import * as v from "valibot";
import { describeIssue, issuePath } from "../validation.ts";
import { type Config, ConfigSchema } from "./schema.ts";

export class ConfigError extends Error {
  override name = "ConfigError";
}

type FlagValue = string | boolean | string[] | undefined;

interface Setting {
  path: readonly string[];
  env: string;
  flag: string;
  /** Turns the text of a variable or flag into the value the schema expects. */
  parse: (raw: string | boolean | string[]) => unknown;
}

const text = (raw: string | boolean | string[]): unknown => (Array.isArray(raw) ? raw.join(",") : raw);
const numberish = (raw: string | boolean | string[]): unknown => {
  const s = text(raw);
  return typeof s === "string" && s.trim() !== "" && Number.isFinite(Number(s)) ? Number(s) : s;
};
const list = (raw: string | boolean | string[]): unknown =>
  (Array.isArray(raw) ? raw : String(raw).split(",")).map((s) => s.trim()).filter((s) => s.length > 0);
const boolish = (raw: string | boolean | string[]): unknown => {
  if (typeof raw === "boolean") return raw;
  const s = String(raw).toLowerCase();
  if (["1", "true", "yes", "on"].includes(s)) return true;
  if (["0", "false", "no", "off"].includes(s)) return false;
  return s;
};

/** One row of SETTINGS: the dotted config path, the variable, the flag and the parser. */
function setting(path: string, env: string, flag: string, parse: Setting["parse"]): Setting {
  return { path: path.split("."), env, flag, parse };
}

/** Settings that variables and flags may set, with the config path each one writes. */
export const SETTINGS: readonly Setting[] = [
  setting("server.listen", "MODELGATE_LISTEN", "listen", text),
  setting("server.tls_cert", "MODELGATE_TLS_CERT", "tls-cert", text),
  setting("server.tls_key", "MODELGATE_TLS_KEY", "tls-key", text),
  setting("server.trusted_proxies", "MODELGATE_TRUSTED_PROXIES", "trusted-proxy", list),
  setting("server.shutdown_deadline_seconds", "MODELGATE_SHUTDOWN_DEADLINE", "shutdown-deadline", numberish),
  setting("server.workers", "MODELGATE_WORKERS", "workers", numberish),
  setting("server.log_format", "MODELGATE_LOG_FORMAT", "log-format", text),
  setting("server.log_level", "MODELGATE_LOG_LEVEL", "log-level", text),
  setting("store.url", "MODELGATE_DB", "db", text),
  setting("store.journal", "MODELGATE_JOURNAL", "journal", text),
  setting("redis.url", "MODELGATE_REDIS_URL", "redis-url", text),
  setting("redis.prefix", "MODELGATE_REDIS_PREFIX", "redis-prefix", text),
  // `--no-bootstrap` is a flag whose presence means enabled = false.
  setting("bootstrap.enabled", "MODELGATE_BOOTSTRAP", "no-bootstrap", (raw) => !raw),
  setting("sim.seed", "MODELGATE_SIM_SEED", "seed", numberish),
  setting("telemetry.otlp_endpoint", "MODELGATE_OTLP_ENDPOINT", "otlp-endpoint", text),
  setting("telemetry.sampling_ratio", "MODELGATE_OTLP_SAMPLING_RATIO", "otlp-sampling-ratio", numberish),
];

/** Variables read by commands other than through SETTINGS; any other MODELGATE_* is a typo. */
const OTHER_ENV = new Set(["MODELGATE_CONFIG", "MODELGATE_ADMIN_URL", "MODELGATE_ADMIN_TOKEN"]);
/** Set by `serve --workers` on its own worker processes (src/cluster/); not for operators. */
const INTERNAL_ENV = new Set(["MODELGATE_WORKER", "MODELGATE_WORKER_PORT"]);

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
    if (envRaw !== undefined && setting.env === "MODELGATE_BOOTSTRAP") {
      apply(raw, origin, setting, boolish(envRaw), setting.env, problems);
    } else if (envRaw !== undefined) {
      apply(raw, origin, setting, setting.parse(envRaw), setting.env, problems);
    }
    const flagRaw = sources.flags[setting.flag];
    if (flagRaw !== undefined && flagRaw !== false) {
      apply(raw, origin, setting, setting.parse(flagRaw), `--${setting.flag}`, problems);
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
