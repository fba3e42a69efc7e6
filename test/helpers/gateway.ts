// Starts the compiled executable on a random loopback port with a fresh SQLite file, and runs
// its CLI against the same store: what integration tests use to talk to a real gateway.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";

export function binary(): string {
  const bin = process.env.MODELGATE_TEST_BIN;
  if (!bin)
    throw new Error(
      "MODELGATE_TEST_BIN is not set: run tests through bun test (bunfig.toml preloads the build)",
    );
  return bin;
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface GatewayOptions {
  /** Extra flags after `serve`. */
  args?: string[];
  /** TOML text written to a file passed as --config. */
  config?: string;
  env?: Record<string, string>;
  /** Reuse this directory (its SQLite file) instead of a new one. */
  dir?: string;
  bootstrap?: boolean;
}

export interface RunningGateway {
  url: string;
  /** The bootstrap key printed at first start (undefined with --no-bootstrap or a non-empty store). */
  key: string | undefined;
  dir: string;
  dbUrl: string;
  proc: Subprocess<"ignore", "pipe", "pipe">;
  /** Everything the server wrote to stderr so far. */
  logs(): string;
  cli(args: string[]): Promise<CliResult>;
  /** Sends SIGTERM and waits for exit; returns the exit code. */
  stop(): Promise<number>;
  /** Stops and deletes the directory. */
  dispose(): Promise<void>;
}

/** Every folder tempDir made in this test process. */
const made = new Set<string>();

/**
 * The safety net under each test's own clean-up, run by the preload when the run ends: a folder a
 * test left (a gateway stopped but not disposed, a test that failed half-way) goes too.
 */
export function removeTempDirs(): void {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
}

/** A new folder under the system's temp folder, removed at the latest when the test run ends. */
export function tempDir(prefix = "modelgate-test-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.add(dir);
  return dir;
}

/** Runs the modelgate CLI with the given arguments (in `cwd` when given). */
export async function runCli(
  args: string[],
  env: Record<string, string> = {},
  cwd?: string,
): Promise<CliResult> {
  const proc = Bun.spawn([binary(), ...args], {
    cwd: cwd ?? process.cwd(),
    stdout: "pipe",
    stderr: "pipe",
    stdin: "ignore",
    env: { ...cleanEnv(), ...env },
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, stdout, stderr };
}

/** The environment without MODELGATE_* variables of the developer's shell. */
function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !name.startsWith("MODELGATE_")) env[name] = value;
  }
  return env;
}

export async function startGateway(options: GatewayOptions = {}): Promise<RunningGateway> {
  const dir = options.dir ?? tempDir();
  const dbUrl = `sqlite://${join(dir, "modelgate.db")}`;
  const args = ["serve", "--listen", "127.0.0.1:0", "--db", dbUrl, ...(options.args ?? [])];
  if (options.bootstrap === false) args.push("--no-bootstrap");
  if (options.config !== undefined) {
    const file = join(dir, "modelgate.toml");
    writeFileSync(file, options.config);
    args.push("--config", file);
  }
  const proc = Bun.spawn([binary(), ...args], {
    cwd: dir,
    stdout: "pipe",
    stderr: "pipe",
    stdin: "ignore",
    env: { ...cleanEnv(), ...options.env },
  });
  let stderr = "";
  const reader = proc.stderr.getReader();
  const decoder = new TextDecoder();
  let url: string | undefined;
  const pump = (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      stderr += decoder.decode(value, { stream: true });
    }
  })();
  const deadline = Date.now() + 15_000;
  while (url === undefined) {
    const match = /"msg":"modelgate listening","url":"([^"]+)"/.exec(stderr);
    if (match) url = match[1];
    else if (proc.exitCode !== null || Date.now() > deadline) {
      if (proc.exitCode === null) proc.kill("SIGKILL");
      await proc.exited;
      await pump.catch(() => undefined);
      // A start that failed leaves nothing behind: the folder made for it goes too.
      if (options.dir === undefined) rmSync(dir, { recursive: true, force: true });
      throw new Error(`gateway did not start (exit ${proc.exitCode}):\n${stderr}`);
    } else await Bun.sleep(10);
  }
  const key = /^\s{4}(sk-[A-Za-z0-9_-]+)$/m.exec(stderr)?.[1];
  const gateway: RunningGateway = {
    url: url ?? "",
    key,
    dir,
    dbUrl,
    proc,
    logs: () => stderr,
    cli: (cliArgs) => runCli([...cliArgs, "--db", dbUrl]),
    async stop() {
      if (proc.exitCode === null) proc.kill("SIGTERM");
      const code = await proc.exited;
      await pump.catch(() => undefined);
      return code;
    },
    async dispose() {
      await gateway.stop();
      if (options.dir === undefined) rmSync(dir, { recursive: true, force: true });
    },
  };
  return gateway;
}

/** Creates a key with `modelgate keys create ARGS` against the running gateway's store. */
export async function createKey(gw: RunningGateway, args: string[]): Promise<{ secret: string; id: string }> {
  const created = await gw.cli(["keys", "create", ...args]);
  if (created.code !== 0) throw new Error(created.stderr);
  const id = /key_[0-9a-f]+/.exec(created.stderr)?.[0];
  if (!id) throw new Error(`no key id in: ${created.stderr}`);
  return { secret: created.stdout.trim(), id };
}

/** GET /v1/dashboard/billing/balance with the key; fails the test unless it answers 200. */
export async function balanceOf(
  gw: RunningGateway,
  secret: string,
): Promise<Record<string, number | string | null>> {
  const response = await fetch(`${gw.url}/v1/dashboard/billing/balance`, {
    headers: { authorization: `Bearer ${secret}` },
  });
  if (response.status !== 200)
    throw new Error(`balance answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as Record<string, number | string | null>;
}

/** The admin token printed in `logs` when a store was bootstrapped, if any. */
export function adminTokenIn(logs: string): string | undefined {
  return /^ {4}(mga-[A-Za-z0-9_-]+)$/m.exec(logs)?.[1];
}

/** The admin token a gateway printed when it bootstrapped its store; fails when it printed none. */
export function bootstrapAdminToken(gw: RunningGateway): string {
  const found = adminTokenIn(gw.logs());
  if (!found) throw new Error(`no admin token printed at bootstrap:\n${gw.logs()}`);
  return found;
}

/** The `error.code` of an OpenAI-shaped error answer. */
export async function errorCode(response: Response): Promise<string | null> {
  const body = (await response.json()) as { error: { code: string | null } };
  return body.error.code;
}

/** Runs `serve` with `toml` as its config file, expecting it to refuse to start; its result. */
export async function serveRefuses(toml: string): Promise<CliResult> {
  const dir = tempDir();
  try {
    writeFileSync(join(dir, "bad.toml"), toml);
    const db = `sqlite://${join(dir, "x.db")}`;
    return await runCli(["serve", "--listen", "127.0.0.1:0", "--db", db, "--config", join(dir, "bad.toml")]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
