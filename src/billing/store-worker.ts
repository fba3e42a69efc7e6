// The store thread's body (a Bun Worker started by store-thread.ts): opens its own connection to
// the store and commits the usage batches and last-used times it is sent, one request at a time in arrival order, each
// answered when its transaction committed or failed. It logs nothing: errors go back to the main
// thread, which logs them and keeps the records in the journal.

import { lowerThreadPriority } from "../base/thread.ts";
import { openStore } from "../store/open.ts";
import type { Store } from "../store/store.ts";
import type { UsageRecord } from "../store/usage/record.ts";
import { parseJournalLines, readLines } from "./journal.ts";
import type { ThreadReply, ThreadRequest } from "./store-thread.ts";

declare const self: Worker;

/**
 * Test-only: the thread exits after committing a batch, before its answer is sent — the death that
 * leaves the main thread retrying a batch the store has (test/unit/usage-batches.test.ts).
 */
const TEST_EXIT_AFTER_COMMIT = process.env.MODELGATE_TEST_STORE_THREAD_EXIT_AFTER_COMMIT === "1";
/** PostgreSQL connections of the store thread's own pool (docs/cluster.md, Connections). */
const STORE_THREAD_POOL = 2;

/**
 * How much nicer than the process the store thread runs on Linux. Its commits share the cores with
 * the event loop (in the bench, one core): below the event loop's priority a commit yields to a
 * request that arrives while it runs, instead of holding it for the commit's length. The records
 * are durable in the journal meanwhile, and the thread needs ~10 µs a request against the event
 * loop's ~150, well within a nice +10 thread's share of a busy core (~1/10).
 */
const STORE_THREAD_NICER = 10;
lowerThreadPriority(STORE_THREAD_NICER);

let store: Store | undefined;
/** Requests run one after another: a close waits for the commit before it. */
let chain: Promise<unknown> = Promise.resolve();

self.addEventListener("message", (event: MessageEvent<ThreadRequest>) => {
  const request = event.data;
  chain = chain.then(async () => {
    const reply: ThreadReply = { id: request.id };
    try {
      await handle(request);
    } catch (error) {
      reply.error = error instanceof Error ? error.message : String(error);
    }
    self.postMessage(reply);
  });
});

async function handle(request: ThreadRequest): Promise<void> {
  switch (request.kind) {
    case "open":
      // Batches are committed one at a time (writer.ts); the second connection reads a batch's
      // settlement row back when a COMMIT's answer was lost.
      store = await openStore(request.url, request.journal, STORE_THREAD_POOL);
      return;
    case "commit": {
      if (!store) throw new Error("the store thread has no store open");
      const records =
        request.range !== undefined
          ? parseJournalLines<UsageRecord>(readLines(request.range), "usage batch").map((entry) => entry.item)
          : (JSON.parse(request.records ?? "[]") as UsageRecord[]);
      await store.usage.commit(records, request.upTo, request.batchId);
      if (TEST_EXIT_AFTER_COMMIT) process.exit(1);
      return;
    }
    case "touch":
      if (!store) throw new Error("the store thread has no store open");
      await store.touchKeys(new Map(request.lastUsed));
      return;
    case "close":
      await store?.close();
      store = undefined;
      return;
    default:
      request satisfies never;
  }
}
