// Migrations embedded in the executable: the compiled binary has no migrations/ folder beside it,
// so each SQL file is imported as text and applied with drizzle's own migration bookkeeping.
import { createHash } from "node:crypto";
import m0000 from "../../migrations/0000_init.sql" with { type: "text" };
import m0001 from "../../migrations/0001_notifications.sql" with { type: "text" };
import m0002 from "../../migrations/0002_cache_writes.sql" with { type: "text" };
import journal from "../../migrations/meta/_journal.json";

/** Every migration file by its journal tag. A unit test checks this against migrations/. */
export const EMBEDDED_SQL: Readonly<Record<string, string>> = {
  "0000_init": m0000,
  "0001_notifications": m0001,
  "0002_cache_writes": m0002,
};

export interface MigrationMeta {
  sql: string[];
  folderMillis: number;
  hash: string;
  bps: boolean;
}

/** The migrations in journal order, in the form drizzle's dialect `migrate` expects. */
export function embeddedMigrations(): MigrationMeta[] {
  return journal.entries.map((entry) => {
    const text = EMBEDDED_SQL[entry.tag];
    if (text === undefined) throw new Error(`migration ${entry.tag} is in the journal but not embedded`);
    return {
      sql: text.split("--> statement-breakpoint"),
      folderMillis: entry.when,
      hash: createHash("sha256").update(text).digest("hex"),
      bps: entry.breakpoints,
    };
  });
}
