// The response cache on one node: a table of the SQLite store's file (response_cache, drizzle
// schema in src/store/sqlite/schema.ts), on its own connection, so every worker process of the node
// shares it. Point reads by primary key (a prepared statement); a put sweeps the table (expired
// answers, then the oldest while the total is over `[cache] max_bytes`) when this process's count
// of the total goes over, and every SWEEP_EVERY puts (the other processes' puts count too).
import { Database } from "bun:sqlite";
import { and, asc, eq, gt, lte, sql } from "drizzle-orm";
import { type BunSQLiteDatabase, drizzle } from "drizzle-orm/bun-sqlite";
import { nanos } from "../base/money.ts";
import { embeddedMigrations } from "../store/migrations.ts";
import { responseCache } from "../store/sqlite/schema.ts";
import type { TextProtocol } from "../wire/text-form.ts";
import type { UsageCounts } from "../wire/usage-counts.ts";
import type { CacheBackend, CachedAnswer } from "./entry.ts";

/** How many puts a process makes between two exact sweeps of the table (other processes put too). */
const SWEEP_EVERY = 64;

export class SqliteCache implements CacheBackend {
  readonly #sqlite: Database;
  readonly #db: BunSQLiteDatabase;
  readonly #maxBytes: number;
  readonly #find;
  readonly #insert;
  /** The table's bytes as of the last sweep plus this process's puts since: sweeps when over. */
  #bytes: number;
  #puts = 0;

  /** Opens the cache table in the SQLite file at `path` (`:memory:`: a private one, migrated here). */
  constructor(path: string, maxBytes: number) {
    this.#sqlite = new Database(path, { create: true, strict: true });
    this.#sqlite.run("PRAGMA journal_mode = WAL");
    // A cached answer lost to a power cut is only asked again: no fsync per put.
    this.#sqlite.run("PRAGMA synchronous = NORMAL");
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
    // Prepared once: a hit is one point read by primary key.
    this.#find = this.#db
      .select()
      .from(responseCache)
      .where(
        and(
          eq(responseCache.key, sql.placeholder("key")),
          gt(responseCache.expiresAt, sql.placeholder("now")),
        ),
      )
      .prepare();
    const slot = (name: string) => sql.placeholder(name);
    const fresh = (column: { name: string }) => sql.raw(`excluded.${column.name}`);
    this.#insert = this.#db
      .insert(responseCache)
      .values({
        key: slot("key"),
        scope: slot("scope"),
        protocol: slot("protocol"),
        answer: slot("answer"),
        usage: slot("usage"),
        costNanos: slot("costNanos"),
        bytes: slot("bytes"),
        createdAt: slot("createdAt"),
        expiresAt: slot("expiresAt"),
      })
      .onConflictDoUpdate({
        target: responseCache.key,
        set: {
          scope: fresh(responseCache.scope),
          protocol: fresh(responseCache.protocol),
          answer: fresh(responseCache.answer),
          usage: fresh(responseCache.usage),
          costNanos: fresh(responseCache.costNanos),
          bytes: fresh(responseCache.bytes),
          createdAt: fresh(responseCache.createdAt),
          expiresAt: fresh(responseCache.expiresAt),
        },
      })
      .prepare();
    this.#bytes = this.#total();
  }

  async get(key: string, now: number): Promise<CachedAnswer | undefined> {
    const row = this.#find.get({ key, now });
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
    this.#db
      .insert(responseCache)
      .values(row)
      .onConflictDoUpdate({ target: responseCache.key, set: row })
      .run();
    this.#bytes += bytes;
    if (this.#bytes > this.#maxBytes || ++this.#puts % SWEEP_EVERY === 0) this.#sweep(entry.createdAt);
  }

  /** Drops the expired answers, then the oldest while the total is over the bound. */
  #sweep(now: number): void {
    this.#sqlite.transaction(() => {
      this.#db.delete(responseCache).where(lte(responseCache.expiresAt, now)).run();
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
      this.#bytes = total;
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
    this.#bytes = this.#total();
    return deleted.length;
  }

  async close(): Promise<void> {
    this.#sqlite.close();
  }
}
