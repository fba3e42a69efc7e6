import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { isPostgresUrl, postgresDatabaseOf, storeLabel, usageJournalPath } from "../../src/store/open.ts";
import { journalSeqName } from "../../src/store/pg/usage.ts";
import { StoreError } from "../../src/store/store.ts";

describe("database URLs", () => {
  test("postgres:// and postgresql:// name a PostgreSQL store and its database", () => {
    expect(isPostgresUrl("postgres://u@h:5432/db")).toBe(true);
    expect(isPostgresUrl("postgresql://u@h/db")).toBe(true);
    expect(isPostgresUrl("sqlite://x.db")).toBe(false);
    expect(postgresDatabaseOf("postgres://u:p@h:5432/gateway")).toBe("gateway");
    expect(() => postgresDatabaseOf("postgres://u@h:5432")).toThrow(StoreError);
    expect(() => postgresDatabaseOf("postgres://u@h:5432/a/b")).toThrow("use postgres://USER@HOST:PORT/DB");
  });

  test("logs show a PostgreSQL URL without its password", () => {
    expect(storeLabel("postgres://mg:s3cret@10.0.0.4:5432/mg")).toBe("postgres://mg:***@10.0.0.4:5432/mg");
    expect(storeLabel("postgres://mg@10.0.0.4:5432/mg")).toBe("postgres://mg@10.0.0.4:5432/mg");
    expect(storeLabel("sqlite://modelgate.db")).toBe("sqlite://modelgate.db");
    // A URL that does not parse (an unescaped # in the password) still hides it, in errors too.
    expect(storeLabel("postgres://mg:pa#ss@w@10.0.0.4:5432/mg")).toBe("postgres://***@10.0.0.4:5432/mg");
    expect(() => postgresDatabaseOf("postgres://mg:pa#ss@w@10.0.0.4:5432/mg")).not.toThrow("pa#ss");
  });

  test("the usage journal: configured path, beside a SQLite file, or modelgate-DB-usage.log for PostgreSQL", () => {
    expect(usageJournalPath("postgres://u@h:5432/gateway")).toBe(resolve("modelgate-gateway-usage.log"));
    expect(usageJournalPath("postgres://u@h:5432/gateway", "/var/lib/mg/usage.log")).toBe(
      "/var/lib/mg/usage.log",
    );
    expect(usageJournalPath("sqlite:///srv/mg.db")).toBe("/srv/mg.db-usage.log");
    expect(usageJournalPath("sqlite://:memory:")).toBeUndefined();
    expect(usageJournalPath("sqlite:///srv/mg.db", "j.log")).toBe(resolve("j.log"));
  });

  test("each node's journal has its own sequence row, named by an id kept beside the journal", () => {
    const dir = mkdtempSync(join(tmpdir(), "mg-journal-id-"));
    try {
      const a = join(dir, "a-usage.log");
      const name = journalSeqName(a);
      expect(name).toMatch(/^usage_journal_seq@[0-9a-f-]{36}$/);
      // The same journal keeps its name whatever the host is called (a container's name changes).
      expect(journalSeqName(a)).toBe(name);
      expect(readFileSync(`${a}.id`, "utf8").trim()).toBe(name.split("@")[1] ?? "");
      expect(journalSeqName(join(dir, "b-usage.log"))).not.toBe(name);
      writeFileSync(`${a}.id`, "not an id\n");
      expect(() => journalSeqName(a)).toThrow("does not hold a journal id");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
