import { describe, expect, test } from "bun:test";
import { hostname } from "node:os";
import { resolve } from "node:path";
import { isPostgresUrl, postgresDatabaseOf, storeLabel, usageJournalPath } from "../../src/store/open.ts";
import { StoreError } from "../../src/store/store.ts";
import { journalSeqName } from "../../src/store/usage-pg.ts";

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

  test("each node's journal has its own sequence row in a shared store", () => {
    expect(journalSeqName("/a/usage.log")).toBe(`usage_journal_seq@${hostname()}:/a/usage.log`);
    expect(journalSeqName("/a/usage.log")).not.toBe(journalSeqName("/b/usage.log"));
  });
});
