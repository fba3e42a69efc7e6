// Runs before the tests. A plain `bun test` compiles the executable that integration tests start
// into a path private to this run (parallel runs never overwrite each other's binary) and removes
// it at the end. Under `bun test --parallel` (scripts/test) this preload runs again for every file
// in a fresh global, so scripts/test compiles once beforehand and passes MODELGATE_TEST_BIN.
import { afterAll } from "bun:test";
import { rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { buildBinary } from "./build.ts";
import { removeTempDirs } from "./gateway.ts";

if (process.env.MODELGATE_TEST_BIN === undefined) {
  if (process.env.BUN_TEST_WORKER_ID !== undefined)
    throw new Error(
      "bun test --parallel compiles nothing (each file would build its own 125 MB binary): run bash scripts/test, " +
        "or build once with `bun test/helpers/build.ts .tmp/bin/modelgate` and set MODELGATE_TEST_BIN to it",
    );
  const dir = join(resolve(import.meta.dir, "../.."), ".tmp", `bin-${process.pid}`);
  const outfile = join(dir, "modelgate");
  buildBinary(outfile);
  process.env.MODELGATE_TEST_BIN = outfile;
  // A preload's afterAll runs once after every file's tests in a serial run (bun test emits no
  // process "exit" to a preload's handler, which left this binary behind after each run).
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
}
// Per file under --parallel (each file has its own global, so its own set of folders), once at
// the end of a serial run: no worker removes another's folders.
afterAll(removeTempDirs);
