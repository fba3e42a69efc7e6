// Change propagation on PostgreSQL: every transaction that moves the store revision (keys, groups,
// accounts, from any node, the admin API or the CLI) also sends a NOTIFY on one channel, delivered
// when it commits; each node LISTENs on a dedicated connection and reloads at once. The revision
// poll stays as the fallback for a message lost while the listening connection was down (Bun's
// client reconnects and re-LISTENs; the node then reloads once, so nothing changed meanwhile is
// missed).
import type { SQL } from "bun";
import { eq, sql } from "drizzle-orm";
import { REVISION_META } from "../usage/record.ts";
import type { PgDb } from "./db.ts";
import { storeMeta } from "./schema.ts";

/** The NOTIFY channel of revision changes (channels are per database, so one name serves all). */
export const REVISION_CHANNEL = "modelgate_revision";

/** Moves the revision inside the transaction `tx` and notifies the listeners when it commits. */
export async function bumpRevision(tx: PgDb): Promise<void> {
  await tx
    .update(storeMeta)
    .set({ value: sql`${storeMeta.value} + 1` })
    .where(eq(storeMeta.name, REVISION_META));
  await tx.execute(sql`select pg_notify(${REVISION_CHANNEL}, '')`);
}

/**
 * Calls `onChange` after each committed revision change, and once after every (re)subscription
 * (what changed while the connection was down). Resolves once LISTEN is acknowledged, with the
 * function that stops listening.
 */
export async function watchRevision(client: SQL, onChange: () => void): Promise<() => Promise<void>> {
  let subscribed = false;
  const subscription = await client.listen(REVISION_CHANNEL, onChange, () => {
    if (subscribed) onChange();
    subscribed = true;
  });
  return () => subscription.unlisten();
}
