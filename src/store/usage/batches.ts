// A usage batch is stored once however often it is sent. The billing writer names each batch when
// it forms it and sends the name with every try (src/billing/writer.ts), so a try after the store
// thread died — on another thread's store object, where nothing the first one held survives —
// names the same batch. The batch's transaction first claims the store_meta row `settle:NAME`: a
// try that finds the row there follows one that committed, and writes nothing. A try whose
// transaction failed reads the row back: a COMMIT whose answer was lost (a dropped PostgreSQL
// connection) is then known to be stored. Both stores (sqlite/usage.ts, pg/usage.ts) commit
// through this class with their own statements.
//
// Rows of batches this store object knows to be stored are deleted by its next transaction. The
// rows a store object leaves when it stops (a thread that died, a process that exited, a CLI that
// replayed a journal) go at the first commit of a later one once a day old: every try of their
// batch ended long before (the writer gives up on a batch within seconds).
import type { UsageRecord } from "./record.ts";

/** The store_meta row prefix of a batch's settlement row (`settle:NAME`). */
export const SETTLE_META = "settle:";

/** Settlement rows this old are swept: no try of their batch can still be running. */
export const SETTLE_ROW_TTL_MS = 24 * 60 * 60 * 1000;

/** What one batch's transaction does with the settlement rows, before it writes the records. */
export interface BatchClaim {
  /** The row this batch claims; when it is there already, the batch is stored. */
  readonly row: string;
  /** The claim's time, ms since the epoch (the row's value). */
  readonly at: number;
  /** Rows of batches known to be stored, to delete (never `row`). */
  readonly stale: readonly string[];
  /** Settlement rows with a value below this are swept too; undefined once this store object swept. */
  readonly sweepBefore: number | undefined;
}

/** One store object's settlement rows: what it knows to be stored and whether it swept. */
export class StoredBatches {
  readonly #done: string[] = [];
  #swept = false;

  /**
   * Stores a batch through `transaction`, which deletes the claim's stale rows, sweeps, then claims
   * its row and writes the records only when the claim is new: it returns the ids as stored, or
   * undefined when an earlier try stored the batch (then the records' own ids are returned).
   * `claimed` reads whether a row is in the store. Without `batchId` (a caller that does not
   * retry: a journal replay, a test) the batch gets a name of its own for this call.
   */
  async commit(
    batchId: string | undefined,
    records: readonly UsageRecord[],
    transaction: (claim: BatchClaim) => Promise<string[] | undefined>,
    claimed: (row: string) => Promise<boolean>,
  ): Promise<string[]> {
    const row = `${SETTLE_META}${batchId ?? crypto.randomUUID()}`;
    const at = Date.now();
    const claim: BatchClaim = {
      row,
      at,
      // A retry of a batch this object stored finds its own row here: it stays for later tries.
      stale: this.#done.splice(0).filter((done) => done !== row),
      sweepBefore: this.#swept ? undefined : at - SETTLE_ROW_TTL_MS,
    };
    let ids: string[] | undefined;
    try {
      ids = await transaction(claim);
    } catch (error) {
      // The COMMIT may have landed with its answer lost: the row says.
      if (!(await claimed(row).catch(() => false))) {
        this.#done.push(...claim.stale);
        throw error;
      }
    }
    this.#done.push(row);
    this.#swept = true;
    return ids ?? records.map((r) => r.requestId);
  }
}
