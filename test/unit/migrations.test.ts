import { describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import journal from "../../migrations/meta/_journal.json";
import pgJournal from "../../migrations/pg/meta/_journal.json";
import { EMBEDDED_PG_SQL, EMBEDDED_SQL, embeddedMigrations } from "../../src/store/migrations.ts";

function sqlFiles(folder: string): string[] {
  return readdirSync(join(import.meta.dir, "../../migrations", folder))
    .filter((f) => f.endsWith(".sql"))
    .map((f) => f.replace(/\.sql$/, ""))
    .sort();
}

describe("embedded migrations", () => {
  test("every migration file is in the journal and embedded in the executable", () => {
    const files = sqlFiles(".");
    expect(journal.entries.map((e) => e.tag).sort()).toEqual(files);
    expect(Object.keys(EMBEDDED_SQL).sort()).toEqual(files);
    expect(embeddedMigrations()).toHaveLength(files.length);
  });

  test("every PostgreSQL migration file is in its journal and embedded in the executable", () => {
    const files = sqlFiles("pg");
    expect(files.length).toBeGreaterThan(0);
    expect(pgJournal.entries.map((e) => e.tag).sort()).toEqual(files);
    expect(Object.keys(EMBEDDED_PG_SQL).sort()).toEqual(files);
    expect(embeddedMigrations("pg")).toHaveLength(files.length);
  });
});
