// The response cache on one node: a table of the SQLite store's file (response_cache, drizzle
// schema in src/store/schema.ts), on its own connection, so every worker process of the node
// shares it. Point reads by primary key; a put evicts the oldest answers (and the expired ones)
// while the total is over `[cache] max_bytes`.
import { Database } from "bun:sqlite";
import { and, asc, eq, gt, lte, sql } from "drizzle-orm";
import { type BunSQLiteDatabase, drizzle } from "drizzle-orm/bun-sqlite";
import { nanos } from "../base/money.ts";
import { embeddedMigrations } from "../store/migrations.ts";
import { responseCache } from "../store/schema.ts";
import type { UsageCounts } from "../store/usage.ts";
import type { TextProtocol } from "../wire/text-form.ts";
import type { CacheBackend, CachedAnswer } from "./entry.ts";

export class SqliteCache implements CacheBackend {
  readonly #sqlite: Database;
  readonly #db: BunSQLiteDatabase;
  readonly #maxBytes: number;

  /** Opens the cache table in the SQLite file at `path` (`:memory:`: a private one, migrated here). */
  constructor(path: string, maxBytes: number) {
    this.#sqlite = new Database(path, { create: true, strict: true });
    this.#sqlite.run("PRAGMA journal_mode = WAL");
    this.#sqlite.run("PRAGMA busy_timeout = 5000");
    this.#db = drizzle({ client: this.#sqlite });
    if (path === ":memory:") {
      const db = this.#db as unknown as {
        dialect: { migrate(m: unknown, s: unknown, c: unknown): void };
        session: unknown;
      };
      db.dialect.migrate(embeddedMigrations(), db.session, { migrationsFolder: "" });
    }
    this.#maxBytes = maxBytes;
  }

  async get(key: string, now: number): Promise<CachedAnswer | undefined> {
    const row = this.#db
      .select()
      .from(responseCache)
      .where(and(eq(responseCache.key, key), gt(responseCache.expiresAt, now)))
      .get();
    if (row === undefined) return undefined;
    return {
      protocol: row.protocol as TextProtocol,
      answer: row.answer,
      usage: row.usage as unknown as UsageCounts,
      costNanos: nanos(row.costNanos),
      createdAt: row.createdAt,
      expiresAt: row.expiresAt,
    };
  }

  async put(key: string, scope: string, entry: CachedAnswer): Promise<void> {
    const bytes = entry.answer.length;
    const row = {
      key,
      scope,
      protocol: entry.protocol,
      answer: entry.answer,
      usage: entry.usage as unknown as Record<string, unknown>,
      costNanos: entry.costNanos,
      bytes,
      createdAt: entry.createdAt,
      expiresAt: entry.expiresAt,
    };
    this.#sqlite.transaction(() => {
      this.#db
        .insert(responseCache)
        .values(row)
        .onConflictDoUpdate({ target: responseCache.key, set: row })
        .run();
      this.#db.delete(responseCache).where(lte(responseCache.expiresAt, entry.createdAt)).run();
      let total = this.#total();
      while (total > this.#maxBytes) {
        const oldest = this.#db
          .select({ key: responseCache.key, bytes: responseCache.bytes })
          .from(responseCache)
          .orderBy(asc(responseCache.createdAt))
          .limit(16)
          .all();
        if (oldest.length === 0) break;
        for (const old of oldest) {
          if (total <= this.#maxBytes) break;
          this.#db.delete(responseCache).where(eq(responseCache.key, old.key)).run();
          total -= old.bytes;
        }
      }
    })();
  }

  #total(): number {
    const row = this.#db
      .select({ n: sql<number>`coalesce(sum(${responseCache.bytes}), 0)` })
      .from(responseCache)
      .get();
    return row?.n ?? 0;
  }

  async purge(scope?: string): Promise<number> {
    const deleted = this.#db
      .delete(responseCache)
      .where(scope === undefined ? undefined : eq(responseCache.scope, scope))
      .returning({ key: responseCache.key })
      .all();
    return deleted.length;
  }

  async close(): Promise<void> {
    this.#sqlite.close();
  }
}
