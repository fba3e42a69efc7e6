// The group-commit writer: one commit per batch, writes resolve only after their batch committed,
// exclusive work runs between batches, failures are retried (a batch keeps its name through its
// retries), close flushes everything.
import { describe, expect, test } from "bun:test";
import { GroupCommitWriter, type LogRange } from "../../src/billing/writer.ts";

describe("group-commit writer", () => {
  test("writes in one window share one commit and resolve after it", async () => {
    const committed: number[][] = [];
    const writer = new GroupCommitWriter<number>(
      async (batch) => {
        committed.push([...batch]);
      },
      { windowMs: 2 },
    );
    const done: number[] = [];
    await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        writer.write(i).then(() => {
          expect(committed.flat()).toContain(i);
          done.push(i);
        }),
      ),
    );
    expect(committed.length).toBe(1);
    expect(committed[0]?.length).toBe(100);
    expect(done.length).toBe(100);
    await writer.close();
  });

  test("classic group commit (default): an idle writer commits at once, writes during a commit form the next batch", async () => {
    const committed: string[][] = [];
    let commits = 0;
    const writer = new GroupCommitWriter<string>(async (batch) => {
      commits++;
      committed.push([...batch]);
      await Bun.sleep(5);
    });
    const first = writer.write("a");
    const second = writer.write("b");
    // Same turn of the event loop: one transaction. The commit starts without waiting for a window.
    await new Promise((resolve) => setImmediate(resolve));
    expect(commits).toBe(1);
    const later = [writer.write("c"), writer.write("d"), writer.write("e")];
    await Promise.all([first, second, ...later]);
    expect(committed).toEqual([
      ["a", "b"],
      ["c", "d", "e"],
    ]);
    await writer.close();
  });

  test("a full batch commits at once; later writes gather while it commits", async () => {
    const sizes: number[] = [];
    const writer = new GroupCommitWriter<number>(
      async (batch) => {
        sizes.push(batch.length);
        await Bun.sleep(5);
      },
      { windowMs: 50, maxBatch: 10 },
    );
    await Promise.all(Array.from({ length: 25 }, (_, i) => writer.write(i)));
    expect(sizes).toEqual([10, 10, 5]);
    await writer.close();
  });

  test("exclusive work runs between batches and sees the items still queued", async () => {
    let inCommit = false;
    const writer = new GroupCommitWriter<string>(
      async () => {
        inCommit = true;
        await Bun.sleep(5);
        inCommit = false;
      },
      { windowMs: 0 },
    );
    const first = writer.write("a");
    const queuedSeen: string[][] = [];
    const ex = writer.exclusive(async () => {
      expect(inCommit).toBe(false);
      queuedSeen.push([...writer.queued()]);
    });
    const second = writer.write("b");
    await Promise.all([first, ex, second]);
    expect(queuedSeen.length).toBe(1);
    await writer.close();
  });

  test("a failed commit is retried; a batch that keeps failing rejects its writes", async () => {
    let calls = 0;
    const flaky = new GroupCommitWriter<number>(
      async () => {
        calls++;
        if (calls < 3) throw new Error("database is locked");
      },
      { windowMs: 0, retryMs: 1 },
    );
    await flaky.write(1);
    expect(calls).toBe(3);
    await flaky.close();
    const broken = new GroupCommitWriter<number>(
      async () => {
        throw new Error("disk full");
      },
      { windowMs: 0, retryMs: 1, attempts: 2 },
    );
    await expect(broken.write(1)).rejects.toThrow("disk full");
    await broken.close();
  });

  test("a batch keeps its name through its retries (the store tells a retry from a new batch); each batch has its own", async () => {
    const tries: { batch: number[]; batchId: string }[] = [];
    const writer = new GroupCommitWriter<number>(
      async (batch, _upTo, _lines, batchId) => {
        tries.push({ batch: [...batch], batchId });
        // The first try lands but its answer is lost (the store thread died before replying).
        if (tries.length === 1) throw new Error("the usage store thread stopped: exited");
      },
      { retryMs: 1 },
    );
    await writer.write(1);
    await writer.write(2);
    expect(tries.map((t) => t.batch)).toEqual([[1], [1], [2]]);
    expect(tries[1]?.batchId).toBe(tries[0]?.batchId as string);
    expect(tries[2]?.batchId).not.toBe(tries[0]?.batchId as string);
    await writer.close();
  });

  test("close commits what is queued and refuses later writes", async () => {
    const committed: number[] = [];
    const writer = new GroupCommitWriter<number>(
      async (batch) => {
        committed.push(...batch);
      },
      { windowMs: 1000 },
    );
    const pending = writer.write(7);
    await writer.close();
    await pending;
    expect(committed).toEqual([7]);
    await expect(writer.write(8)).rejects.toThrow("closed");
  });
});

describe("group-commit writer with a durable log", () => {
  class MemoryLog {
    appended: number[][] = [];
    clears = 0;
    seq = 0;
    fail = false;
    append(items: readonly number[]): number {
      if (this.fail) throw new Error("disk full");
      this.appended.push([...items]);
      this.seq += items.length;
      return this.seq;
    }
    clear(): void {
      this.clears++;
    }
  }

  test("a write is durable once logged; the store gets logged items in larger commits after the delay", async () => {
    const log = new MemoryLog();
    const commits: { batch: number[]; upTo: number | undefined }[] = [];
    const writer = new GroupCommitWriter<number>(
      async (batch, upTo) => {
        commits.push({ batch: [...batch], upTo });
      },
      { log, storeDelayMs: 300, storeBatch: 100 },
    );
    await writer.write(1);
    await writer.write(2);
    await Promise.all([writer.write(3), writer.write(4)]);
    // Each write resolved after its append, none waited for the store.
    expect(log.appended).toEqual([[1], [2], [3, 4]]);
    expect(commits).toEqual([]);
    expect(writer.queued()).toEqual([1, 2, 3, 4]);
    while (commits.length === 0) await Bun.sleep(5);
    expect(commits).toEqual([{ batch: [1, 2, 3, 4], upTo: 4 }]);
    expect(writer.queued()).toEqual([]);
    expect(log.clears).toBe(1);
    await writer.close();
  });

  test("a full store batch commits at once, in chunks of at most storeBatch", async () => {
    const log = new MemoryLog();
    const commits: number[][] = [];
    const writer = new GroupCommitWriter<number>(
      async (batch) => {
        commits.push([...batch]);
      },
      { log, storeDelayMs: 60_000, storeBatch: 4 },
    );
    await Promise.all(Array.from({ length: 10 }, (_, i) => writer.write(i)));
    while (commits.flat().length < 8) await Bun.sleep(1);
    expect(commits.every((c) => c.length <= 4)).toBe(true);
    await writer.flush();
    expect(commits.flat()).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    await writer.close();
  });

  test("a store batch given as a function is asked before each commit", async () => {
    const log = new MemoryLog();
    const commits: number[][] = [];
    let most = 3;
    const writer = new GroupCommitWriter<number>(
      async (batch) => {
        commits.push([...batch]);
        most = 5; // as the ledger's limit grows once its store thread is ready
      },
      { log, storeDelayMs: 60_000, storeBatch: () => most },
    );
    await Promise.all(Array.from({ length: 8 }, (_, i) => writer.write(i)));
    await writer.flush();
    expect(commits).toEqual([
      [0, 1, 2],
      [3, 4, 5, 6, 7],
    ]);
    await writer.close();
  });

  test("flush and close put every logged item in the store", async () => {
    const log = new MemoryLog();
    const committed: number[] = [];
    const writer = new GroupCommitWriter<number>(
      async (batch) => {
        committed.push(...batch);
      },
      { log, storeDelayMs: 60_000 },
    );
    await writer.write(1);
    await writer.flush();
    expect(committed).toEqual([1]);
    await writer.write(2);
    await writer.close();
    expect(committed).toEqual([1, 2]);
  });

  test("a store that keeps failing leaves the items logged (not lost) and retries later", async () => {
    const log = new MemoryLog();
    let failing = true;
    const committed: number[] = [];
    const writer = new GroupCommitWriter<number>(
      async (batch) => {
        if (failing) throw new Error("database is locked");
        committed.push(...batch);
      },
      { log, storeDelayMs: 1, attempts: 2, retryMs: 1 },
    );
    await writer.write(5);
    await Bun.sleep(20);
    expect(committed).toEqual([]);
    expect(writer.queued()).toEqual([5]);
    failing = false;
    while (committed.length === 0) await Bun.sleep(2);
    expect(committed).toEqual([5]);
    await writer.close();
  });

  test("when the log cannot be written, the batch is committed to the store directly; logged items wait as before", async () => {
    const log = new MemoryLog();
    const committed: { batch: number[]; upTo: number | undefined }[] = [];
    const writer = new GroupCommitWriter<number>(
      async (batch, upTo) => {
        committed.push({ batch: [...batch], upTo });
      },
      { log, storeDelayMs: 60_000 },
    );
    await writer.write(8);
    expect(committed).toEqual([]);
    log.fail = true;
    await writer.write(9);
    expect(committed).toEqual([{ batch: [9], upTo: undefined }]);
    expect(writer.queued()).toEqual([8]);
    await writer.close();
    expect(committed).toEqual([
      { batch: [9], upTo: undefined },
      { batch: [8], upTo: 1 },
    ]);
  });

  test("appends go on while a store commit runs; each commit names where its lines lie, and the log keeps only the unstored ones", async () => {
    const log = new RangeLog();
    let release: () => void = () => undefined;
    const commits: { batch: number[]; range: LogRange | undefined }[] = [];
    const writer = new GroupCommitWriter<number>(
      async (batch, _upTo, range) => {
        commits.push({ batch: [...batch], range });
        if (commits.length === 1) await new Promise<void>((resolve) => (release = resolve));
      },
      { log, storeDelayMs: 60_000, storeBatch: 2 },
    );
    await Promise.all([writer.write(1), writer.write(2)]);
    // The first commit hangs; later writes still resolve once logged. The append of two lines
    // (2 bytes each) lie in one range: the commit carries where, not their text.
    expect(commits).toEqual([{ batch: [1, 2], range: { path: "log", from: 0, to: 4 } }]);
    await writer.write(3);
    expect(log.appended).toEqual([[1, 2], [3]]);
    release();
    await writer.flush();
    // After the first commit only item 3 was unstored: the log shrank to its line, from byte 4,
    // and the next commit names it where it then lies.
    expect(log.compactions).toEqual(["1 from 4"]);
    expect(commits).toEqual([
      { batch: [1, 2], range: { path: "log", from: 0, to: 4 } },
      { batch: [3], range: { path: "log", from: 0, to: 2 } },
    ]);
    expect(log.clears).toBe(1);
    await writer.close();
  });

  test("appends are not split between commits (a batch is one range of the log) unless one alone is larger than the batch", async () => {
    const log = new RangeLog();
    const commits: { batch: number[]; range: LogRange | undefined }[] = [];
    const writer = new GroupCommitWriter<number>(
      async (batch, _upTo, range) => {
        commits.push({ batch: [...batch], range });
      },
      { log, storeDelayMs: 60_000, storeBatch: 3 },
    );
    await Promise.all([writer.write(1), writer.write(2)]);
    await Promise.all([writer.write(3), writer.write(4)]);
    await writer.flush();
    // [1, 2] and [3, 4] are two appends; the second does not fit beside the first.
    expect(commits).toEqual([
      { batch: [1, 2], range: { path: "log", from: 0, to: 4 } },
      { batch: [3, 4], range: { path: "log", from: 0, to: 4 } },
    ]);
    // One append of five, more than the batch of 3: split, its parts as records.
    await Promise.all([5, 6, 7, 8, 9].map((i) => writer.write(i)));
    await writer.flush();
    expect(commits.slice(2)).toEqual([
      { batch: [5, 6, 7], range: undefined },
      { batch: [8, 9], range: undefined },
    ]);
    await writer.close();
  });

  test("exclusive work waits for the store commit in flight and holds the next one", async () => {
    const log = new RangeLog();
    let inCommit = false;
    const writer = new GroupCommitWriter<number>(
      async () => {
        inCommit = true;
        await Bun.sleep(5);
        inCommit = false;
      },
      { log, storeDelayMs: 0, storeBatch: 1 },
    );
    await Promise.all([writer.write(1), writer.write(2)]);
    const seen: number[][] = [];
    await writer.exclusive(async () => {
      expect(inCommit).toBe(false);
      seen.push([...writer.queued()]);
      await Bun.sleep(10);
      expect(inCommit).toBe(false);
    });
    expect(seen.length).toBe(1);
    await writer.close();
    expect(writer.queued()).toEqual([]);
  });
});

/** A log that lays each item out as a 2-byte line of a file named "log", and records what it is told to keep. */
class RangeLog {
  appended: number[][] = [];
  compactions: string[] = [];
  clears = 0;
  seq = 0;
  size = 0;
  lastRange: LogRange | undefined;
  append(items: readonly number[]): number {
    this.appended.push([...items]);
    this.lastRange = { path: "log", from: this.size, to: this.size + 2 * items.length };
    this.size += 2 * items.length;
    this.seq += items.length;
    return this.seq;
  }
  clear(): void {
    this.clears++;
    this.size = 0;
  }
  compact(count: number, from: number): boolean {
    this.compactions.push(`${count} from ${from}`);
    this.size -= from;
    return true;
  }
}
