// How a command reaches the gateway's data: the configuration loaded as `serve` loads it, and the
// store opened with the usage journal a stopped server left caught up first.
import { existsSync } from "node:fs";
import { catchUpJournal } from "../billing/journal.ts";
import { STORE_BATCH } from "../billing/ledger.ts";
import { loadConfig } from "../config/load.ts";
import type { Config } from "../config/schema.ts";
import { isPostgresUrl, openStore, sqlitePathOf, usageJournalPath } from "../store/open.ts";
import type { Store } from "../store/store.ts";
import { usageRecordProblem } from "../store/usage/record-check.ts";
import type { Options } from "./flags.ts";
import { UsageError } from "./usage-error.ts";

/** Flags every command that opens the store accepts. */
export const STORE_FLAGS = {
  db: { type: "string" },
  journal: { type: "string" },
  config: { type: "string" },
  json: { type: "boolean" },
} as const satisfies Options;

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
  const stored = await catchUpJournal(journal, store.usage, STORE_BATCH, usageRecordProblem);
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
