import { describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import journal from "../../migrations/meta/_journal.json";
import { EMBEDDED_SQL, embeddedMigrations } from "../../src/store/migrations.ts";

describe("embedded migrations", () => {
  test("every migration file is in the journal and embedded in the executable", () => {
    const files = readdirSync(join(import.meta.dir, "../../migrations"))
      .filter((f) => f.endsWith(".sql"))
      .map((f) => f.replace(/\.sql$/, ""))
      .sort();
    expect(journal.entries.map((e) => e.tag).sort()).toEqual(files);
    expect(Object.keys(EMBEDDED_SQL).sort()).toEqual(files);
    expect(embeddedMigrations()).toHaveLength(files.length);
  });
});
