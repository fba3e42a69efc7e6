// Reading a gateway's usage records from its SQLite file in a test. Another process (the gateway's
// store thread) writes them shortly after the answer, so the readers below wait for them. A request
// is found by the gateway's own id or by the id the test sent (kept as `client_request_id`).
// Given the gateway, a reader asks it to commit what it has settled (flushUsage) before each look,
// instead of waiting out the store's batching delay (up to 500 ms a record).
import { Database } from "bun:sqlite";
import { adminTokenIn, type RunningGateway } from "./gateway.ts";
import { waitFor } from "./wait.ts";

/** The columns of usage_records tests look at, as stored. */
export interface StoredUsage {
  request_id: string;
  model: string;
  alias: string | null;
  endpoint: string;
  stream: number;
  status: number;
  cost_nanos: number;
  input_tokens: number;
  output_tokens: number;
  detail: string | null;
  cache_hit: number;
  channels: string;
}

/** How a test names its request: the whole id, or the prefix of the ids a group of requests sent. */
export type IdMatch = "exact" | "prefix";

/** The records of `requestId` stored so far (`columns`: the SELECT list). */
export function recordsNow<T = StoredUsage>(
  db: Database,
  requestId: string,
  columns = "*",
  match: IdMatch = "exact",
): T[] {
  const where =
    match === "exact"
      ? "request_id = ?1 OR client_request_id = ?1"
      : "request_id LIKE ?1 || '%' OR client_request_id LIKE ?1 || '%'";
  return db.query(`SELECT ${columns} FROM usage_records WHERE ${where}`).all(requestId) as T[];
}

const adminTokens = new WeakMap<RunningGateway, string | null>();

/**
 * Has the gateway commit the usage records it has settled so far: every admin API call flushes
 * the journal into the store first (src/admin/http.ts). Nothing without a bootstrap admin token.
 */
export async function flushUsage(gw: RunningGateway): Promise<void> {
  let token = adminTokens.get(gw);
  if (token === undefined) {
    token = adminTokenIn(gw.logs()) ?? null;
    adminTokens.set(gw, token);
  }
  if (token === null) return;
  const response = await fetch(`${gw.url}/admin/v1/groups`, {
    headers: { authorization: `Bearer ${token}` },
  });
  await response.arrayBuffer();
}

/** Every record of `requestId`, once at least one is stored (committed by `gw` when given). */
export function recordsOf<T = StoredUsage>(
  db: Database,
  requestId: string,
  columns = "*",
  match: IdMatch = "exact",
  gw?: RunningGateway,
): Promise<T[]> {
  return waitFor(`a usage record of ${requestId}`, async () => {
    if (gw !== undefined) await flushUsage(gw);
    const rows = recordsNow<T>(db, requestId, columns, match);
    return rows.length > 0 ? rows : undefined;
  });
}

/** The stored usage record of `requestId` in the running gateway's store, or undefined while none is. */
export function storedUsage(gw: RunningGateway, requestId: string): StoredUsage | undefined {
  const db = new Database(gw.dbUrl.replace(/^sqlite:\/\//, ""), { readonly: true });
  try {
    return recordsNow(db, requestId)[0];
  } finally {
    db.close();
  }
}

/** Waits until the usage record of `requestId` is stored in the running gateway's store. */
export function waitForUsage(gw: RunningGateway, requestId: string): Promise<StoredUsage> {
  return waitFor(`the usage record of ${requestId}`, async () => {
    await flushUsage(gw);
    return storedUsage(gw, requestId);
  });
}
