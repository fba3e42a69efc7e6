// Compiles the executable that integration tests start. The preload calls it for a plain
// `bun test`; scripts/test runs it once before `bun test --parallel`, whose workers re-run the
// preload for every file (a fresh global each) and so must not compile:
//
//   bun test/helpers/build.ts OUTFILE
import { mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { writeVocabulary } from "../../scripts/vocabulary.ts";

const root = resolve(import.meta.dir, "../..");

/** Writes the tokenizer's vocabulary, then compiles src/main.ts into `outfile`. */
export function buildBinary(outfile: string): void {
  mkdirSync(dirname(outfile), { recursive: true });
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
}

if (import.meta.main) {
  const outfile = process.argv[2];
  if (!outfile) throw new Error("usage: bun test/helpers/build.ts OUTFILE");
  buildBinary(resolve(outfile));
}
