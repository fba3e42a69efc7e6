// Reads a running gateway's usage records straight from its SQLite file (read-only), for tests that
// check what was billed and recorded for a request.
import { Database } from "bun:sqlite";
import type { RunningGateway } from "./gateway.ts";
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

/**
 * The stored usage record of `requestId` (the gateway's own id, or the id the test sent, kept as
 * `client_request_id`), or undefined while it is not stored.
 */
export function storedUsage(gw: RunningGateway, requestId: string): StoredUsage | undefined {
  const db = new Database(gw.dbUrl.replace(/^sqlite:\/\//, ""), { readonly: true });
  try {
    const row = db
      .query("SELECT * FROM usage_records WHERE request_id = ?1 OR client_request_id = ?1")
      .get(requestId);
    return (row ?? undefined) as StoredUsage | undefined;
  } finally {
    db.close();
  }
}

/** Waits until the usage record of `requestId` is stored (the store thread commits after the answer). */
export function waitForUsage(gw: RunningGateway, requestId: string): Promise<StoredUsage> {
  return waitFor(`the usage record of ${requestId}`, () => storedUsage(gw, requestId));
}
