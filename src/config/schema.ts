// The configuration schema: a TOML file, MODELGATE_* variables and flags all end up here.
// Strict objects: an unknown field is an error naming its path.
import * as v from "valibot";
import { AdminConfigSchema } from "./admin.ts";
import { AliasesConfigSchema } from "./aliases.ts";
import { Cidr, ModelPattern, PrintableName, usdText, wholeNumber } from "./blocks.ts";
import { CacheConfigSchema } from "./cache.ts";
import { ChannelRoutingFields, CredentialFields, FaultProfileSchema, RoutingSchema } from "./channels.ts";
import { EndpointsConfigSchema } from "./endpoints.ts";
import { MetricsConfigSchema } from "./metrics.ts";
import { PRESET_NAMES, QuirksSchema, unknownPreset, withPreset } from "./presets.ts";
import { BillingSchema } from "./prices.ts";
import { TelemetryConfigSchema } from "./telemetry.ts";
import { TextConfigSchema } from "./text.ts";

/** `host:port` or `[ipv6]:port`; port 0 picks a free port. */
export const ListenSchema = v.pipe(
  v.string(),
  v.regex(
    /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/,
    "expected HOST:PORT such as 127.0.0.1:8080 or [::1]:8080",
  ),
  v.check((s) => Number(s.slice(s.lastIndexOf(":") + 1)) <= 65535, "port must be at most 65535"),
);

/** Splits a listen address, `host:port` or `[v6]:port`, into parts. */
export function splitListen(listen: string): { hostname: string; port: number } {
  const at = listen.lastIndexOf(":");
  return { hostname: listen.slice(0, at).replace(/^\[(.*)\]$/, "$1"), port: Number(listen.slice(at + 1)) };
}

const UsdAmount = usdText("such as 10 or 2.50");

const ServerSchema = v.strictObject({
  listen: v.optional(ListenSchema, "127.0.0.1:8080"),
  /** PEM certificate chain file; with tls_key, the listener speaks HTTPS. */
  tls_cert: v.optional(v.pipe(v.string(), v.minLength(1))),
  tls_key: v.optional(v.pipe(v.string(), v.minLength(1))),
  /** Offer HTTP/2 (ALPN with TLS, prior knowledge without). */
  http2: v.optional(v.boolean(), true),
  /** How long shutdown waits for in-flight requests before closing them. */
  shutdown_deadline_seconds: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(3600)), 30),
  /** Longest pause between two chunks of a request body before it is answered 408. */
  body_idle_timeout_seconds: v.optional(v.pipe(v.number(), v.minValue(0.1), v.maxValue(3600)), 15),
  /** Longest time a whole request body may take to arrive before it is answered 408. */
  body_timeout_seconds: v.optional(v.pipe(v.number(), v.minValue(0.1), v.maxValue(3600)), 60),
  /** Peers whose X-Forwarded-For is believed. */
  trusted_proxies: v.optional(v.array(Cidr), []),
  /** Processes serving HTTP on the one port (reusePort); above 1, a primary keeps the limits (docs/workers.md). */
  workers: v.optional(wholeNumber(1, 64), 1),
  /** Log lines (access log included): `text` for a person, `json` for a collector, `auto` = text on a terminal. */
  log_format: v.optional(v.picklist(["auto", "text", "json"], "expected auto, text or json"), "auto"),
  /** The least severe log lines written: `debug` shows every refused request's detail, `error` only failures. */
  log_level: v.optional(
    v.picklist(["debug", "info", "warn", "error"], "expected debug, info, warn or error"),
    "info",
  ),
  /** One log line per request (src/http/access-log.ts). */
  access_log: v.optional(v.boolean(), true),
  /**
   * A file the stage timeline is written to when the process stops (src/telemetry/timeline.ts):
   * every request's stages and what else ran on the event loop. Off when absent; for benchmarks.
   */
  stage_trace: v.optional(v.pipe(v.string(), v.minLength(1, "expected a file path"))),
});

const StoreSchema = v.strictObject({
  url: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^(sqlite|postgres|postgresql):\/\//, "expected sqlite://PATH or postgres://USER@HOST:PORT/DB"),
    ),
    "sqlite://modelgate.db",
  ),
  /** This node's usage journal; default beside the SQLite file, or modelgate-DB-usage.log for PostgreSQL. */
  journal: v.optional(v.pipe(v.string(), v.minLength(1, "expected a file path"))),
  /**
   * Most PostgreSQL connections of a serving node's pool (key loads, revision polls, seeds, the
   * admin API); the node opens 3 more of its own (docs/cluster.md, Connections). Unused on SQLite.
   */
  pool_size: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100)), 4),
});

/** The shared limiter of several nodes (docs/cluster.md); without a url the limiter is in memory. */
const RedisSchema = v.strictObject({
  url: v.optional(
    v.pipe(v.string(), v.regex(/^rediss?:\/\/[^\s]+$/, "expected redis://HOST:PORT (or rediss:// for TLS)")),
  ),
  /** Nodes with the same store and prefix share limits; one prefix per cluster. */
  prefix: v.optional(
    v.pipe(v.string(), v.regex(/^[A-Za-z0-9._:-]+$/, "expected letters, digits, '.', '_', ':' or '-'")),
    "modelgate",
  ),
  /** How long a stopped node's slots and reservations stay held (renewed every third of it while alive). */
  lease_seconds: v.optional(v.pipe(v.number(), v.minValue(1), v.maxValue(600)), 15),
  /**
   * Deadline of one Redis call in ms, after which the request answers 503 limiter_unavailable. Time
   * the node's own event loop was busy does not count (docs/cluster.md, Failure policy).
   */
  timeout_ms: v.optional(v.pipe(v.number(), v.integer(), v.minValue(10), v.maxValue(10_000)), 200),
});

const BootstrapSchema = v.strictObject({
  /** On an empty store, create account, group and key `default` at first start. */
  enabled: v.optional(v.boolean(), true),
  balance_usd: v.optional(UsdAmount, "10"),
});

const SimSchema = v.strictObject({
  seed: v.optional(wholeNumber(0), 0),
});

/** Why a base URL cannot be called, or undefined when it can (an http or https URL with a host). */
export function checkBaseUrl(raw: string): string | undefined {
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  // `localhost:11434/v1` parses as a URL whose scheme is `localhost:`: say what was meant.
  if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:") || url.host === "") {
    const bare = raw.replace(/^[a-z][a-z0-9+.-]*:\/\//i, "");
    return `${JSON.stringify(raw)} is not an http(s) URL; write the scheme, e.g. http://${bare} for a local server or https://${bare}`;
  }
  return undefined;
}

const BaseUrl = v.pipe(
  v.string(),
  v.check(
    (s) => checkBaseUrl(s) === undefined,
    (issue) => checkBaseUrl(String(issue.input)) ?? "expected an http(s) URL",
  ),
);

/** An upstream channel: which protocol it speaks, where, with what credential, for which models. */
const ChannelVariants = v.variant("kind", [
  v.strictObject({
    kind: v.literal("sim"),
    name: v.pipe(PrintableName, v.minLength(1)),
    models: v.optional(v.array(ModelPattern), ["*"]),
    /** How this in-process simulator misbehaves (see src/config/channels.ts). */
    profile: v.optional(FaultProfileSchema),
    ...ChannelRoutingFields,
  }),
  v.strictObject({
    kind: v.picklist(["openai-responses", "openai-chat", "anthropic", "openai-images"]),
    name: v.pipe(PrintableName, v.minLength(1)),
    /** A preset (src/config/presets.ts) filled kind, base_url and api_key_env where this entry did not. */
    preset: v.optional(v.picklist(PRESET_NAMES)),
    base_url: BaseUrl,
    /** Name of the environment variable holding the upstream credential; the value is never logged. */
    api_key_env: v.optional(
      v.pipe(v.string(), v.regex(/^[A-Z_][A-Z0-9_]*$/, "expected an environment variable name")),
    ),
    models: v.array(ModelPattern),
    /** Public model id → the id the upstream knows. */
    model_map: v.optional(v.record(v.string(), v.string()), {}),
    /** Chat Completions dialect overrides on top of the preset's (docs/upstreams.md). */
    quirks: v.optional(QuirksSchema),
    ...CredentialFields,
    ...ChannelRoutingFields,
  }),
]);

/** A channel entry: an unknown preset is named first, then the preset fills its defaults. */
const ChannelSchema = v.pipe(
  v.unknown(),
  v.rawCheck(({ dataset, addIssue }) => {
    const problem = unknownPreset(dataset.value);
    if (problem === undefined || typeof dataset.value !== "object" || dataset.value === null) return;
    const input = dataset.value as Record<string, unknown>;
    const at = { type: "object", origin: "value", input, key: "preset", value: input.preset } as const;
    addIssue({ message: problem, path: [at] });
  }),
  v.transform(withPreset),
  ChannelVariants,
);

/** The input of a section left out of the file. */
type Empty = Record<string, never>;
/** A section schema must accept Empty (every field optional): tsc names one that does not. */
type AcceptsEmpty<S extends v.GenericSchema> =
  Empty extends v.InferInput<S> ? unknown : "every field optional";
type Sections<T extends Record<string, v.GenericSchema>> = { [K in keyof T]: v.OptionalSchema<T[K], Empty> };

/**
 * Sections a file may leave out whole: each is optional with `{}` as its default, so its fields'
 * defaults apply and Config's sections are never undefined.
 */
function sections<T extends Record<string, v.GenericSchema>>(
  schemas: T & { [K in keyof T]: AcceptsEmpty<T[K]> },
): Sections<T> {
  return Object.fromEntries(
    Object.entries<v.GenericSchema>(schemas).map(([name, schema]) => [name, v.optional(schema, {})]),
  ) as Sections<T>;
}

export const ConfigSchema = v.strictObject({
  ...sections({
    server: ServerSchema,
    store: StoreSchema,
    redis: RedisSchema,
    bootstrap: BootstrapSchema,
    sim: SimSchema,
    billing: BillingSchema,
    admin: AdminConfigSchema,
    text: TextConfigSchema,
    metrics: MetricsConfigSchema,
    telemetry: TelemetryConfigSchema,
    endpoints: EndpointsConfigSchema,
    routing: RoutingSchema,
    aliases: AliasesConfigSchema,
    cache: CacheConfigSchema,
  }),
  channels: v.optional(v.array(ChannelSchema), [{ kind: "sim", name: "simulator", models: ["*"] }]),
});

export type Config = v.InferOutput<typeof ConfigSchema>;
export type ChannelConfig = Config["channels"][number];
