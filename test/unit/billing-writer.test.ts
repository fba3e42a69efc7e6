// The group-commit writer: one commit per batch, writes resolve only after their batch committed,
// exclusive work runs between batches, failures are retried, close flushes everything.
import { describe, expect, test } from "bun:test";
import { GroupCommitWriter } from "../../src/billing/writer.ts";

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
