// The store thread commits below the event loop's priority (src/billing/store-worker.ts): on
// Linux its nice value is 10 above the process's, so a commit running when a request arrives
// yields the core to the event loop. The thread is told apart from other Workers of the test
// process as the task that appeared when it started.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os, { tmpdir } from "node:os";
import { join } from "node:path";
import { StoreThread } from "../../src/billing/store-thread.ts";
import { openStore } from "../../src/store/open.ts";

const dir = mkdtempSync(join(tmpdir(), "modelgate-store-priority-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const tasks = () => new Set(readdirSync("/proc/self/task"));
/** A task's nice value: field 19 of its stat line, counted after the command's closing parenthesis. */
function niceOf(tid: string): number {
  const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]);
}

test.skipIf(process.platform !== "linux")(
  "the store thread runs 10 nice steps below the process",
  async () => {
    const url = `sqlite://${join(dir, "modelgate.db")}`;
    const store = await openStore(url);
    await store.close();
    const before = tasks();
    const thread = await StoreThread.open(url);
    try {
      const started = [...tasks()].filter(
        (tid) => !before.has(tid) && readFileSync(`/proc/self/task/${tid}/comm`, "utf8").trim() === "Worker",
      );
      expect(started).toHaveLength(1);
      expect(niceOf(started[0] ?? "")).toBe(Math.min(19, os.getPriority() + 10));
    } finally {
      await thread.close();
    }
  },
);
