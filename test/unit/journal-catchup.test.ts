// Readers catching up on the usage journal (issue 17, defect 8): with no running owner the
// records the store lacks are stored once, in order; with a running owner nothing is touched.
import { afterEach, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { catchUpJournal, Journal, type JournalSink } from "../../src/billing/journal.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function journalPath(): string {
  const dir = mkdtempSync(join(tmpdir(), "modelgate-catchup-"));
  dirs.push(dir);
  return join(dir, "usage.log");
}

/** A sink that keeps what it is given, and its last stored number, as a store would. */
function sink(seq: number): JournalSink<string> & { items: string[]; seq: number } {
  const state = {
    items: [] as string[],
    seq,
    async journalSeq() {
      return state.seq;
    },
    async commit(items: readonly string[], last?: number) {
      state.items.push(...items);
      if (last !== undefined) state.seq = Math.max(state.seq, last);
    },
  };
  return state;
}

/** Takes every item as a record. */
const anyItem = () => undefined;

/** A journal with entries 1..n written by a process that is gone (its lock left behind). */
function crashedJournal(n: number): string {
  const path = journalPath();
  const journal = Journal.open<string>(path);
  if (!journal) throw new Error("journal not opened");
  journal.append(Array.from({ length: n }, (_, i) => `r${i + 1}`));
  journal.close();
  writeFileSync(`${path}.pid`, "999999999"); // no such process
  return path;
}

test("stores exactly the records the store lacks, in order, and empties the journal", async () => {
  const path = crashedJournal(10);
  const store = sink(4);
  expect(await catchUpJournal(path, store, 3, anyItem)).toBe(6);
  expect(store.items).toEqual(["r5", "r6", "r7", "r8", "r9", "r10"]);
  expect(store.seq).toBe(10);
  // A second reader (or the next serve start) finds nothing left to store: none twice.
  expect(await catchUpJournal(path, store, 3, anyItem)).toBe(0);
  expect(store.items).toHaveLength(6);
  expect(existsSync(`${path}.pid`)).toBe(false);
});

test("a journal owned by a running process is left to it", async () => {
  const path = crashedJournal(3);
  writeFileSync(`${path}.pid`, String(process.ppid)); // alive: the test runner's parent
  const store = sink(0);
  expect(await catchUpJournal(path, store, 10, anyItem)).toBeUndefined();
  expect(store.items).toEqual([]);
});

test("no journal file: nothing to do and no file created", async () => {
  const path = journalPath();
  expect(await catchUpJournal(path, sink(0), 10, anyItem)).toBeUndefined();
  expect(existsSync(path)).toBe(false);
});

test("a line that is not a record is set aside for the operator; the others are stored", async () => {
  const path = crashedJournal(5);
  const store = sink(0);
  const notR3 = (item: unknown) => (item === "r3" ? "r3 is not a record" : undefined);
  expect(await catchUpJournal(path, store, 2, notR3)).toBe(4);
  expect(store.items).toEqual(["r1", "r2", "r4", "r5"]);
  expect(store.seq).toBe(5);
  expect(readFileSync(`${path}.rejected`, "utf8")).toBe('3\t"r3"\n');
  expect(await catchUpJournal(path, store, 2, notR3)).toBe(0);
});

test("a line set aside by a replay whose store commit failed is set aside once, however often it is replayed", async () => {
  const path = crashedJournal(4);
  const store = sink(0);
  const commit = store.commit;
  let down = true;
  store.commit = async (items, last) => {
    if (down) throw new Error("the store is down");
    return commit(items, last);
  };
  const notR2 = (item: unknown) => (item === "r2" ? "r2 is not a record" : undefined);
  // The start fails (the store is down) and is tried again, twice.
  await expect(catchUpJournal(path, store, 10, notR2)).rejects.toThrow("the store is down");
  await expect(catchUpJournal(path, store, 10, notR2)).rejects.toThrow("the store is down");
  down = false;
  expect(await catchUpJournal(path, store, 10, notR2)).toBe(3);
  expect(store.items).toEqual(["r1", "r3", "r4"]);
  expect(readFileSync(`${path}.rejected`, "utf8")).toBe('2\t"r2"\n');
});
