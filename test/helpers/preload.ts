// Runs once before the tests: compiles the executable that integration tests start, into a
// path private to this test run (so parallel runs never overwrite each other's binary).
import { afterAll } from "bun:test";
import { mkdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { writeVocabulary } from "../../scripts/vocabulary.ts";
import { removeTempDirs } from "./gateway.ts";

const root = resolve(import.meta.dir, "../..");
const dir = join(root, ".tmp", `bin-${process.pid}`);
mkdirSync(dir, { recursive: true });
const outfile = join(dir, "modelgate");
writeVocabulary(); // the tokenizer embeds it; unit tests importing the tokenizer read it too
const build = Bun.spawnSync(
  // --splitting as `npm run build` ships it: the tests run the layout operators get.
  [
    process.execPath,
    "build",
    "--compile",
    "--sourcemap",
    "--splitting",
    join(root, "src/main.ts"),
    "--outfile",
    outfile,
  ],
  { cwd: root, stdout: "pipe", stderr: "pipe" },
);
if (build.exitCode !== 0) {
  throw new Error(
    `building the modelgate executable failed:\n${build.stderr.toString()}${build.stdout.toString()}`,
  );
}
process.env.MODELGATE_TEST_BIN = outfile;
// A preload's afterAll runs once after every file's tests (bun test emits no process "exit" to a
// preload's handler, which left this 125 MB binary behind after each run).
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  removeTempDirs();
});
