// Shared set-up for the coding-CLI compatibility tests: the translation rig (Responses, Chat and
// Messages upstreams over HTTP to the simulator), a private HOME per run, and an environment that
// keeps the CLIs on 127.0.0.1 (no telemetry, update checks or other nonessential traffic).
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

/** The coding CLIs live in their own install (test/compat/clis/, `npm ci` there; scripts/test runs it). */
export const BIN = resolve(import.meta.dir, "clis/node_modules/.bin");

export interface Sandbox {
  home: string;
  work: string;
  dispose(): void;
}

/**
 * A private HOME and working folder. `strays`: folders outside them that the CLI makes whatever
 * TMPDIR says; each is removed by dispose() when it was not there before. Only the sandbox of the
 * CLI that makes a folder names it: the test files run in parallel, and another CLI's sandbox
 * removing it would pull it from under a running CLI.
 */
export function sandbox(prefix: string, strays: readonly string[] = []): Sandbox {
  const home = mkdtempSync(join(tmpdir(), `${prefix}-home-`));
  const work = mkdtempSync(join(tmpdir(), `${prefix}-work-`));
  // The CLIs' own temporary folders (Claude Code's claude-0 and cc-socks, Codex's sandbox
  // folders) go under TMPDIR: inside HOME, so dispose() removes them with it.
  mkdirSync(join(home, "tmp"));
  const made = strays.filter((dir) => !existsSync(dir));
  return {
    home,
    work,
    dispose() {
      rmSync(home, { recursive: true, force: true });
      rmSync(work, { recursive: true, force: true });
      for (const dir of made) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A minimal environment: PATH, the private HOME, no proxy variables, nothing of the developer's. */
export function baseEnv(home: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    TMPDIR: join(home, "tmp"),
    NO_PROXY: "127.0.0.1,localhost",
    LANG: "C.UTF-8",
  };
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export async function run(
  cmd: string[],
  cwd: string,
  env: Record<string, string>,
  timeoutMs = 90_000,
): Promise<RunResult> {
  const proc = Bun.spawn(cmd, { cwd, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => proc.kill("SIGKILL"), timeoutMs);
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  clearTimeout(timer);
  return { code, stdout, stderr };
}
