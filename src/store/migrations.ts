// Migrations embedded in the executable, SQLite's (migrations/) and PostgreSQL's (migrations/pg/): the compiled binary has no migrations/ folder beside it,
// so each SQL file is imported as text and applied with drizzle's own migration bookkeeping.
import { createHash } from "node:crypto";
import m0000 from "../../migrations/0000_init.sql" with { type: "text" };
import m0001 from "../../migrations/0001_notifications.sql" with { type: "text" };
import m0002 from "../../migrations/0002_cache_writes.sql" with { type: "text" };
import m0003 from "../../migrations/0003_tool_calls.sql" with { type: "text" };
import m0004 from "../../migrations/0004_client_request_id.sql" with { type: "text" };
import m0005 from "../../migrations/0005_aliases_response_cache.sql" with { type: "text" };
import m0006 from "../../migrations/0006_audio_units.sql" with { type: "text" };
import m0007 from "../../migrations/0007_key_tpm.sql" with { type: "text" };
import m0008 from "../../migrations/0008_budgets.sql" with { type: "text" };
import journal from "../../migrations/meta/_journal.json";
import pg0000 from "../../migrations/pg/0000_init.sql" with { type: "text" };
import pg0001 from "../../migrations/pg/0001_tool_calls.sql" with { type: "text" };
import pg0002 from "../../migrations/pg/0002_client_request_id.sql" with { type: "text" };
import pg0003 from "../../migrations/pg/0003_aliases_response_cache.sql" with { type: "text" };
import pg0004 from "../../migrations/pg/0004_audio_units.sql" with { type: "text" };
import pg0005 from "../../migrations/pg/0005_key_tpm.sql" with { type: "text" };
import pg0006 from "../../migrations/pg/0006_budgets.sql" with { type: "text" };
import pgJournal from "../../migrations/pg/meta/_journal.json";

/** Every migration file by its journal tag. A unit test checks this against migrations/. */
export const EMBEDDED_SQL: Readonly<Record<string, string>> = {
  "0000_init": m0000,
  "0001_notifications": m0001,
  "0002_cache_writes": m0002,
  "0003_tool_calls": m0003,
  "0004_client_request_id": m0004,
  "0005_aliases_response_cache": m0005,
  "0006_audio_units": m0006,
  "0007_key_tpm": m0007,
  "0008_budgets": m0008,
};

/** Every PostgreSQL migration file by its journal tag, checked against migrations/pg/ likewise. */
export const EMBEDDED_PG_SQL: Readonly<Record<string, string>> = {
  "0000_init": pg0000,
  "0001_tool_calls": pg0001,
  "0002_client_request_id": pg0002,
  "0003_aliases_response_cache": pg0003,
  "0004_audio_units": pg0004,
  "0005_key_tpm": pg0005,
  "0006_budgets": pg0006,
};

interface Journal {
  entries: { tag: string; when: number; breakpoints: boolean }[];
}

const DIALECTS: Record<"sqlite" | "pg", { journal: Journal; sql: Readonly<Record<string, string>> }> = {
  sqlite: { journal, sql: EMBEDDED_SQL },
  pg: { journal: pgJournal, sql: EMBEDDED_PG_SQL },
};

export interface MigrationMeta {
  sql: string[];
  folderMillis: number;
  hash: string;
  bps: boolean;
}

/** The migrations in journal order, in the form drizzle's dialect `migrate` expects. */
export function embeddedMigrations(dialect: "sqlite" | "pg" = "sqlite"): MigrationMeta[] {
  const { journal, sql } = DIALECTS[dialect];
  return journal.entries.map((entry) => {
    const text = sql[entry.tag];
    if (text === undefined) throw new Error(`migration ${entry.tag} is in the journal but not embedded`);
    return {
      sql: text.split("--> statement-breakpoint"),
      folderMillis: entry.when,
      hash: createHash("sha256").update(text).digest("hex"),
      bps: entry.breakpoints,
    };
  });
}
