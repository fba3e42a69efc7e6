// Processes the benchmark starts: spawned pinned to a core with taskset, logs to files, stopped
// by their own pid only; CPU time and RSS of a process and its children read from /proc.
import { closeSync, openSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";

/** Core split on the 2-core machine: load generator and upstream on one, the target on the other. */
export const LOAD_CORE = 0;
export const TARGET_CORE = 1;
/** The several-processes comparison lets the target use both cores (sharing core 0 with the load). */
export const BOTH_CORES = "0,1";

const CLOCK_TICKS = 100; // USER_HZ on Linux; /proc/<pid>/stat counts in these.

export interface Proc {
  name: string;
  pid: number;
  sub: Subprocess;
  logFile: string;
  stop(): Promise<void>;
}

export interface SpawnOptions {
  name: string;
  cmd: string[];
  /** A core, or a taskset list such as BOTH_CORES. */
  core: number | string;
  dir: string;
  env?: Record<string, string>;
  cwd?: string;
}

/** Starts `cmd` pinned to `core`; stdout and stderr go to `<dir>/<name>.log`. */
export function spawnPinned(options: SpawnOptions): Proc {
  const logFile = join(options.dir, `${options.name}.log`);
  const fd = openSync(logFile, "a");
  const sub = Bun.spawn(["taskset", "-c", String(options.core), ...options.cmd], {
    cwd: options.cwd ?? options.dir,
    env: { ...process.env, ...options.env },
    stdin: "ignore",
    stdout: fd,
    stderr: fd,
  });
  closeSync(fd);
  const proc: Proc = {
    name: options.name,
    pid: sub.pid,
    sub,
    logFile,
    async stop() {
      if (sub.exitCode !== null || sub.signalCode !== null) return;
      sub.kill("SIGTERM");
      const exited = await Promise.race([sub.exited.then(() => true), Bun.sleep(5000).then(() => false)]);
      if (!exited) {
        sub.kill("SIGKILL");
        await sub.exited;
      }
    },
  };
  return proc;
}

/** The last `max` characters of a process's log, for error messages. */
export function logTail(proc: Proc, max = 2000): string {
  try {
    return readFileSync(proc.logFile, "utf8").slice(-max);
  } catch {
    return "(no log)";
  }
}

/** Waits until `probe` answers true (or throws with the log tail after `timeoutMs`). */
export async function waitReady(
  proc: Proc,
  probe: () => Promise<boolean>,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (proc.sub.exitCode !== null) {
      throw new Error(`${proc.name} exited with ${proc.sub.exitCode} before it was ready:\n${logTail(proc)}`);
    }
    if (await probe().catch(() => false)) return;
    await Bun.sleep(50);
  }
  throw new Error(`${proc.name} was not ready after ${timeoutMs} ms:\n${logTail(proc)}`);
}

/** A free loopback TCP port (bound and released). */
export function freePort(): number {
  const server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = server.port;
  server.stop(true);
  return port;
}

interface StatLine {
  ppid: number;
  ticks: number;
}

function readStat(pid: number): StatLine | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // The command name may hold spaces; fields after the closing parenthesis are fixed.
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  return { ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) };
}

/** The pid and every descendant (nginx's worker, for instance). */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (stat) children.set(stat.ppid, [...(children.get(stat.ppid) ?? []), Number(entry)]);
  }
  const tree: number[] = [];
  const queue = [root];
  while (queue.length > 0 && tree.length < 1000) {
    const pid = queue.shift() as number;
    tree.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return tree;
}

/** User + system CPU seconds of a process tree. */
export function cpuSeconds(root: number): number {
  let ticks = 0;
  for (const pid of processTree(root)) ticks += readStat(pid)?.ticks ?? 0;
  return ticks / CLOCK_TICKS;
}

/**
 * CPU seconds of a process tree at nanosecond resolution: the sum of every live thread's run time
 * (/proc/PID/task/TID/schedstat). For short phases, where /proc/PID/stat's 10 ms ticks are too
 * coarse; time of threads that already exited is not in it.
 */
export function cpuSecondsPrecise(root: number): number {
  let ns = 0;
  for (const pid of processTree(root)) {
    try {
      for (const tid of readdirSync(`/proc/${pid}/task`)) {
        const first = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0];
        ns += Number(first ?? 0);
      }
    } catch {
      // The process or thread left between listing and reading.
    }
  }
  return ns / 1e9;
}

/** Run time of each thread of a process tree by thread name (digits dropped), ns; the main thread is `main`. */
export function threadTimes(root: number): Map<string, number> {
  const times = new Map<string, number>();
  for (const pid of processTree(root)) {
    try {
      for (const tid of readdirSync(`/proc/${pid}/task`)) {
        const task = `/proc/${pid}/task/${tid}`;
        const name =
          tid === String(pid) ? "main" : readFileSync(`${task}/comm`, "utf8").trim().replace(/\d+$/, "");
        const ns = Number(readFileSync(`${task}/schedstat`, "utf8").split(" ")[0] ?? 0);
        times.set(name, (times.get(name) ?? 0) + ns);
      }
    } catch {
      // The process or thread left between listing and reading.
    }
  }
  return times;
}

/** The machine's load average over 1, 5 and 15 minutes, as /proc/loadavg gives it. */
export function loadAverage(): string {
  return readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
}

/** Resident set size of a process tree, in bytes. */
export function rssBytes(root: number): number {
  let kb = 0;
  for (const pid of processTree(root)) {
    try {
      const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
      kb += Number(match?.[1] ?? 0);
    } catch {
      // The process left between listing and reading: it holds no memory any more.
    }
  }
  return kb * 1024;
}

/**
 * Pins this process (the orchestrator and its in-process clients) to the load core: every thread
 * (`-a`). Without it only the main thread moved, and the runtime's threads made before (its GC
 * helpers, JIT, thread pool, scavenger, and the HTTP client once a fetch had run) stayed free to
 * run on the target's core.
 */
export function pinSelf(core: number): void {
  Bun.spawnSync(["taskset", "-apc", String(core), String(process.pid)], {
    stdout: "ignore",
    stderr: "ignore",
  });
}

/** Runs a command to completion with a time limit; returns exit code and output. */
export async function runBounded(
  cmd: string[],
  timeoutMs: number,
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const sub = Bun.spawn(cmd, {
    env: { ...process.env, ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => sub.kill("SIGKILL"), timeoutMs);
  const [stdout, stderr, code] = await Promise.all([
    new Response(sub.stdout).text(),
    new Response(sub.stderr).text(),
    sub.exited,
  ]);
  clearTimeout(timer);
  return { code, stdout, stderr };
}
