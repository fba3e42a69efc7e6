// Config's type, checked by tsc (this file is in tsconfig's include): every section a file may leave
// out is still present in Config (its `{}` default applies), and each section's type is its own
// schema's output, so building ConfigSchema's sections with a helper keeps the inferred type exact.
import { expect, test } from "bun:test";
import type { AdminConfig } from "../../src/config/admin.ts";
import type { RoutingConfig } from "../../src/config/channels.ts";
import type { EndpointsConfig } from "../../src/config/endpoints.ts";
import { loadConfig } from "../../src/config/load.ts";
import type { MetricsConfig } from "../../src/config/metrics.ts";
import type { BillingConfig } from "../../src/config/prices.ts";
import type { ChannelConfig, Config } from "../../src/config/schema.ts";
import type { TelemetryConfig } from "../../src/config/telemetry.ts";
import type { TextConfig } from "../../src/config/text.ts";

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Expect<T extends true> = T;

const SECTIONS = [
  "server",
  "store",
  "redis",
  "bootstrap",
  "sim",
  "billing",
  "admin",
  "text",
  "metrics",
  "telemetry",
  "endpoints",
  "routing",
  "aliases",
  "cache",
] as const;
type Section = (typeof SECTIONS)[number];

export type ConfigTypeChecks = [
  Expect<Equal<keyof Config, Section | "channels">>,
  Expect<Equal<Extract<Config[Section], undefined>, never>>,
  Expect<Equal<Config["billing"], BillingConfig>>,
  Expect<Equal<Config["admin"], AdminConfig>>,
  Expect<Equal<Config["text"], TextConfig>>,
  Expect<Equal<Config["metrics"], MetricsConfig>>,
  Expect<Equal<Config["telemetry"], TelemetryConfig>>,
  Expect<Equal<Config["endpoints"], EndpointsConfig>>,
  Expect<Equal<Config["routing"], RoutingConfig>>,
  Expect<Equal<Config["channels"], ChannelConfig[]>>,
  Expect<Equal<Config["sim"], { seed: number }>>,
  Expect<Equal<Config["server"]["listen"], string>>,
  Expect<Equal<Config["redis"]["url"], string | undefined>>,
  Expect<Equal<Config["bootstrap"], { enabled: boolean; balance_usd: string }>>,
];

test("every section left out is present with its defaults", () => {
  const config = loadConfig({ env: {}, flags: {} });
  for (const section of SECTIONS) expect(typeof config[section]).toBe("object");
  expect(Object.keys(config).sort()).toEqual([...SECTIONS, "channels"].sort());
});
