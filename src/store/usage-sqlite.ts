// The SQLite usage store. The batch write uses prepared bun:sqlite statements rather than the
// query builder: it is the one hot write path (thousands of rows per second), and one transaction
// per batch is what makes group commit cheap.
import type { Database } from "bun:sqlite";
import { nanos } from "../billing/money.ts";
import type { Nanos } from "../types.ts";
import type {
  UsageFilter,
  UsageGroupBy,
  UsageRecord,
  UsageSourceName,
  UsageStore,
  UsageTotals,
} from "./usage.ts";
import { USAGE_JOURNAL_SEQ } from "./usage.ts";

const INSERT_RECORD = `INSERT INTO usage_records (request_id, key_id, account_id, model, endpoint, stream,
  status, input_tokens, cached_input_tokens, cache_write_tokens, cache_write_1h_tokens, output_tokens,
  reasoning_tokens, generations, cost_nanos, usage_source, channels, latency_ms, ttfb_ms, client_address,
  end_user, detail, created_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (request_id) DO NOTHING`;
const INSERT_DEBIT = `INSERT INTO ledger (account_id, amount_nanos, kind, request_id, note, created_at)
  VALUES (?, ?, 'debit', ?, ?, ?)`;
const DEBIT_ACCOUNT = "UPDATE accounts SET balance_nanos = balance_nanos - ? WHERE id = ?";
const SET_JOURNAL_SEQ = `INSERT INTO store_meta (name, value) VALUES ('${USAGE_JOURNAL_SEQ}', ?)
  ON CONFLICT (name) DO UPDATE SET value = max(value, excluded.value)`;
const COUNT_REUSES =
  "SELECT count(*) AS n FROM usage_records WHERE request_id = ? OR request_id LIKE ? ESCAPE '\\'";

type Row = Record<string, string | number | null>;

export class SqliteUsageStore implements UsageStore {
  readonly #sqlite: Database;
  readonly #commit: (records: readonly UsageRecord[], journalSeq: number | undefined) => string[];

  constructor(sqlite: Database) {
    this.#sqlite = sqlite;
    this.#commit = sqlite.transaction((records: readonly UsageRecord[], journalSeq: number | undefined) => {
      // A journaled batch skips the records the store already has (their numbers are consecutive
      // and end at journalSeq), as the PostgreSQL store does: a replayed batch bills nothing twice.
      const covered = journalSeq === undefined ? 0 : coveredBy(this.#storedSeq(), journalSeq, records.length);
      const ids = this.#write(records.slice(covered));
      if (journalSeq !== undefined) this.#sqlite.query(SET_JOURNAL_SEQ).run(journalSeq);
      return [...records.slice(0, covered).map((r) => r.requestId), ...ids];
    });
  }

  async commit(records: readonly UsageRecord[], journalSeq?: number): Promise<string[]> {
    if (records.length === 0) return [];
    return this.#commit(records, journalSeq);
  }

  async journalSeq(): Promise<number> {
    return this.#storedSeq();
  }

  #storedSeq(): number {
    const row = this.#sqlite.query("SELECT value FROM store_meta WHERE name = ?").get(USAGE_JOURNAL_SEQ) as {
      value: number;
    } | null;
    return row?.value ?? 0;
  }

  #write(records: readonly UsageRecord[]): string[] {
    // query() caches the compiled statement (the tables exist only after migrate(), so not earlier).
    const insert = this.#sqlite.query(INSERT_RECORD);
    const debit = this.#sqlite.query(INSERT_DEBIT);
    const perAccount = new Map<number, number>();
    const ids: string[] = [];
    for (const record of records) {
      let id = record.requestId;
      if (insert.run(...recordValues(record, id)).changes === 0) {
        // A different request reused a client-sent x-request-id: bill it too, under id~N.
        id = `${id}~${this.#reuses(id) + 1}`;
        insert.run(...recordValues(record, id));
      }
      ids.push(id);
      if (record.costNanos > 0) {
        debit.run(record.accountId, -record.costNanos, id, record.endpoint, record.createdAt);
        perAccount.set(record.accountId, (perAccount.get(record.accountId) ?? 0) + record.costNanos);
      }
    }
    const update = this.#sqlite.query(DEBIT_ACCOUNT);
    for (const [accountId, cost] of perAccount) update.run(cost, accountId);
    return ids;
  }

  #reuses(id: string): number {
    const row = this.#sqlite.query(COUNT_REUSES).get(id, likeFamily(id)) as { n: number } | null;
    return row?.n ?? 1;
  }

  async balances(): Promise<Map<number, Nanos>> {
    const rows = this.#sqlite.query("SELECT id, balance_nanos AS b FROM accounts").all() as {
      id: number;
      b: number;
    }[];
    return new Map(rows.map((r) => [r.id, nanos(r.b)]));
  }

  async spentByKeySince(since: number): Promise<Map<string, Nanos>> {
    const rows = this.#sqlite
      .query(
        "SELECT key_id AS k, sum(cost_nanos) AS c FROM usage_records WHERE created_at >= ? GROUP BY key_id",
      )
      .all(since) as { k: string; c: number }[];
    return new Map(rows.map((r) => [r.k, nanos(r.c)]));
  }

  async find(requestId: string): Promise<UsageRecord | undefined> {
    const row = this.#sqlite
      .query("SELECT * FROM usage_records WHERE request_id = ?")
      .get(requestId) as Row | null;
    return row ? fromRow(row) : undefined;
  }

  async totals(filter: UsageFilter, groupBy?: UsageGroupBy, dayOffsetMinutes = 0): Promise<UsageTotals[]> {
    const where: string[] = [];
    const params: (string | number)[] = [];
    if (filter.keyId !== undefined) {
      where.push("u.key_id = ?");
      params.push(filter.keyId);
    }
    if (filter.account !== undefined) {
      where.push("u.account_id = (SELECT id FROM accounts WHERE name = ?)");
      params.push(filter.account);
    }
    if (filter.since !== undefined) {
      where.push("u.created_at >= ?");
      params.push(filter.since);
    }
    if (filter.until !== undefined) {
      where.push("u.created_at < ?");
      params.push(filter.until);
    }
    const offsetSeconds = Math.trunc(dayOffsetMinutes) * 60;
    const group =
      groupBy === "model"
        ? "u.model"
        : groupBy === "key"
          ? "u.key_id"
          : groupBy === "day"
            ? `strftime('%Y-%m-%d', u.created_at / 1000 + ${offsetSeconds}, 'unixepoch')`
            : "NULL";
    const sql = `SELECT ${group} AS g, count(*) AS requests, coalesce(sum(u.input_tokens), 0) AS input,
      coalesce(sum(u.cached_input_tokens), 0) AS cached, coalesce(sum(u.output_tokens), 0) AS output,
      coalesce(sum(u.reasoning_tokens), 0) AS reasoning, coalesce(sum(u.generations), 0) AS generations,
      coalesce(sum(u.cost_nanos), 0) AS cost FROM usage_records u
      ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""}
      ${groupBy ? "GROUP BY g ORDER BY g" : ""}`;
    const rows = this.#sqlite.query(sql).all(...params) as Row[];
    return rows.map((r) => ({
      group: r.g === null || r.g === undefined ? null : String(r.g),
      requests: Number(r.requests),
      inputTokens: Number(r.input),
      cachedInputTokens: Number(r.cached),
      outputTokens: Number(r.output),
      reasoningTokens: Number(r.reasoning),
      generations: Number(r.generations),
      costNanos: nanos(Number(r.cost)),
    }));
  }
}

/**
 * How many of a journaled batch's first records the store already holds: the batch's numbers are
 * consecutive and end at `upTo`, and the store holds every number up to `stored`.
 */
export function coveredBy(stored: number, upTo: number, count: number): number {
  return Math.min(count, Math.max(0, stored - (upTo - count)));
}

/** The LIKE pattern (escape `\\`) of the `id~N` ids of requests that reused a client-sent id. */
export function likeFamily(id: string): string {
  return `${id.replaceAll("\\", "\\\\").replaceAll("%", "\\%").replaceAll("_", "\\_")}~%`;
}

function recordValues(r: UsageRecord, id: string): (string | number | null)[] {
  return [
    id,
    r.keyId,
    r.accountId,
    r.model,
    r.endpoint,
    r.stream ? 1 : 0,
    r.status,
    r.inputTokens,
    r.cachedInputTokens,
    // A journal line written before these fields existed has none.
    r.cacheWriteTokens ?? 0,
    r.cacheWrite1hTokens ?? 0,
    r.outputTokens,
    r.reasoningTokens,
    r.generations,
    r.costNanos,
    r.usageSource,
    r.channels.join(","),
    r.latencyMs,
    r.ttfbMs,
    r.clientAddress,
    r.endUser,
    r.detail === null ? null : JSON.stringify(r.detail),
    r.createdAt,
  ];
}

function fromRow(row: Row): UsageRecord {
  const num = (name: string) => Number(row[name] ?? 0);
  const text = (name: string) => (row[name] === null || row[name] === undefined ? null : String(row[name]));
  const detail = text("detail");
  return {
    requestId: String(row.request_id),
    keyId: String(row.key_id),
    accountId: num("account_id"),
    model: String(row.model),
    endpoint: String(row.endpoint),
    stream: num("stream") === 1,
    status: num("status"),
    inputTokens: num("input_tokens"),
    cachedInputTokens: num("cached_input_tokens"),
    cacheWriteTokens: num("cache_write_tokens"),
    cacheWrite1hTokens: num("cache_write_1h_tokens"),
    outputTokens: num("output_tokens"),
    reasoningTokens: num("reasoning_tokens"),
    generations: num("generations"),
    costNanos: nanos(num("cost_nanos")),
    usageSource: String(row.usage_source) as UsageSourceName,
    channels: String(row.channels ?? "")
      .split(",")
      .filter((c) => c.length > 0),
    latencyMs: num("latency_ms"),
    ttfbMs: row.ttfb_ms === null ? null : num("ttfb_ms"),
    clientAddress: text("client_address"),
    endUser: text("end_user"),
    detail: detail === null ? null : (JSON.parse(detail) as Record<string, unknown>),
    createdAt: num("created_at"),
  };
}
