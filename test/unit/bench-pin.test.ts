// The bench pins its own process to the load core: every thread of it, including the runtime's
// threads made before the call (GC helpers, JIT, thread pool, the HTTP client after a fetch), so
// none of the client's work runs on the core of the target under test.
import { expect, test } from "bun:test";
import { resolve } from "node:path";

const PROCS = resolve(import.meta.dir, "../../bench/procs.ts");

test("pinSelf moves every thread of the process, not only the main one", () => {
  const script = `
    import { readdirSync, readFileSync } from "node:fs";
    import { pinSelf } from ${JSON.stringify(PROCS)};
    Bun.gc(true);
    await fetch("http://127.0.0.1:1").catch(() => {});
    pinSelf(0);
    const allowed = readdirSync("/proc/self/task").map((tid) => {
      const status = readFileSync(\`/proc/self/task/\${tid}/status\`, "utf8");
      return /Cpus_allowed_list:\\s*(\\S+)/.exec(status)?.[1];
    });
    console.log(JSON.stringify(allowed));
  `;
  const run = Bun.spawnSync([process.execPath, "-e", script], { stderr: "pipe" });
  expect(run.stderr.toString()).toBe("");
  const allowed = JSON.parse(run.stdout.toString()) as string[];
  // The runtime has made its helper threads by then: the check covers more than the main thread.
  expect(allowed.length).toBeGreaterThan(1);
  expect(new Set(allowed)).toEqual(new Set(["0"]));
});
