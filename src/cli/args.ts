// Command-line parsing on node:util parseArgs, with valibot checking what the values mean.
import { existsSync } from "node:fs";
import { type ParseArgsConfig, parseArgs } from "node:util";
import * as v from "valibot";
import { parseUsd } from "../base/money.ts";
import { catchUpJournal } from "../billing/journal.ts";
import { STORE_BATCH } from "../billing/ledger-meter.ts";
import { checkName } from "../config/blocks.ts";
import { loadConfig } from "../config/load.ts";
import type { Config } from "../config/schema.ts";
import { isPostgresUrl, openStore, sqlitePathOf, usageJournalPath } from "../store/open.ts";
import type { Store } from "../store/store.ts";
import type { Nanos } from "../types.ts";

/** A problem with what the operator typed: printed as is, exit status 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

export type Options = NonNullable<ParseArgsConfig["options"]>;

/** Flags every command that opens the store accepts. */
export const STORE_FLAGS = {
  db: { type: "string" },
  journal: { type: "string" },
  config: { type: "string" },
  json: { type: "boolean" },
} as const satisfies Options;

export function parse<O extends Options>(args: string[], options: O, command: string) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(`${command}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** Loads the configuration the way `serve` does, so `--db`/`--config`/MODELGATE_DB agree everywhere. */
export function configFrom(values: {
  db?: string | undefined;
  journal?: string | undefined;
  config?: string | undefined;
}): Config {
  return loadConfig({
    file: values.config ?? process.env.MODELGATE_CONFIG,
    env: process.env,
    flags: { db: values.db, journal: values.journal },
  });
}

export async function storeFrom(values: {
  db?: string | undefined;
  journal?: string | undefined;
  config?: string | undefined;
}): Promise<Store> {
  return openStoreCaughtUp(configFrom(values));
}

/**
 * Opens the store for a CLI command, first storing usage records a killed server left only in
 * its usage journal (src/billing/journal.ts), so balances and usage include every durable record.
 */
export async function openStoreCaughtUp(config: Config): Promise<Store> {
  refuseMissingDatabase(config.store.url);
  const store = await openStore(config.store.url, config.store.journal);
  const journal = usageJournalPath(config.store.url, config.store.journal);
  const stored = await catchUpJournal(journal, store.usage, STORE_BATCH);
  if (stored) console.error(`stored ${stored} usage records left in the usage journal by a stopped server`);
  return store;
}

/**
 * Only `serve` creates a database. A store command run in another folder would otherwise open a
 * new empty `modelgate.db` there and print empty tables as if the install had no data.
 */
function refuseMissingDatabase(url: string): void {
  if (isPostgresUrl(url)) return; // a missing PostgreSQL database is refused when opened
  const path = sqlitePathOf(url);
  if (path === ":memory:" || existsSync(path)) return;
  throw new UsageError(
    `no database at ${path} (store.url ${url}); only \`modelgate serve\` creates one. Point this command at the gateway's database with --db sqlite://PATH, the MODELGATE_DB variable, or --config FILE (its store.url), or run it in the folder where serve runs`,
  );
}

export function usd(text: string, flag: string): Nanos {
  const parsed = parseUsd(text);
  if (!parsed.ok) throw new UsageError(`${flag}: ${parsed.message}`);
  return parsed.value;
}

/** An operator-given name (account, group, key, admin token), refused with `field` named when it holds a control character. */
export function printableName(text: string, field: string): string {
  const problem = checkName(text);
  if (problem) throw new UsageError(`${field}: ${problem}`);
  return text;
}

export function positiveInt(text: string | undefined, flag: string): number | null {
  if (text === undefined) return null;
  const result = v.safeParse(v.pipe(v.string(), v.regex(/^\d+$/), v.transform(Number), v.minValue(1)), text);
  if (!result.success) throw new UsageError(`${flag}: expected a whole number of at least 1, got "${text}"`);
  return result.output;
}

/** Prints rows as aligned columns (for the non-JSON form of `list` commands). */
export function table(rows: Record<string, unknown>[], columns: string[]): string {
  const cells = rows.map((row) => columns.map((c) => formatCell(row[c])));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((r) => r[i]?.length ?? 0)));
  const line = (values: string[]) =>
    values
      .map((value, i) => value.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd();
  return [line(columns.map((c) => c.toUpperCase())), ...cells.map(line)].join("\n");
}

function formatCell(value: unknown): string {
  if (value === null || value === undefined) return "-";
  if (Array.isArray(value)) return value.length === 0 ? "-" : value.join(",");
  // Names stored before control characters were refused are shown escaped, never sent to the terminal.
  return String(value).replace(
    /\p{Cc}/gu,
    (c) => `\\x${(c.codePointAt(0) ?? 0).toString(16).padStart(2, "0")}`,
  );
}
