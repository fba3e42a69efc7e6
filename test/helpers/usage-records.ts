// Reading a gateway's usage records from its SQLite file in a test: the records of one request,
// waited for (another process, the gateway's writer, stores them).
import type { Database } from "bun:sqlite";

/**
 * The usage records of `requestId` once at least one is stored, or none after `ms` (polled: the
 * gateway stores a record before its answer's last byte, but the test reads another process's file).
 * `requestId` is the gateway's own id or the id the test sent (kept as `client_request_id`).
 */
export async function recordsOf<T>(
  db: Database,
  requestId: string,
  columns = "*",
  ms = 15_000,
): Promise<T[]> {
  const query = db.query(
    `SELECT ${columns} FROM usage_records WHERE request_id = ?1 OR client_request_id = ?1`,
  );
  const until = Date.now() + ms;
  for (;;) {
    const rows = query.all(requestId) as T[];
    if (rows.length > 0 || Date.now() > until) return rows;
    await Bun.sleep(20);
  }
}
