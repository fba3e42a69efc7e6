// The primary's worker processes: starts N copies of this executable as workers on one port,
// restarts one that dies (after releasing the requests it held, with a growing delay when it keeps
// dying), and on shutdown forwards the signal and waits for every worker to drain and exit.
import type { Subprocess } from "bun";
import { log } from "../base/log.ts";
import { selfCommand } from "../base/reexec.ts";
import type { UsageEvent } from "../billing/feed.ts";
import { type HostBilling, WorkerHost } from "./host.ts";
import { batched } from "./protocol.ts";

const RESTART_FIRST_MS = 100;
const RESTART_MAX_MS = 10_000;
/** A worker that stayed up this long after listening starts its restart delay from the first step again. */
const HEALTHY_MS = 30_000;
/** How long after exit a late IPC close may take before the worker's requests are released anyway. */
const DISCONNECT_WAIT_MS = 1000;

interface Slot {
  index: number;
  proc: Subprocess | undefined;
  host: WorkerHost | undefined;
  /** Settled once the current process has exited and what it held is released. */
  exited: Promise<void>;
  readyAt: number | undefined;
  failures: number;
  restart: ReturnType<typeof setTimeout> | undefined;
}

function running(proc: Subprocess | undefined): proc is Subprocess {
  return proc !== undefined && proc.exitCode === null && proc.signalCode === null;
}

export interface SupervisorOptions {
  workers: number;
  /** The port every worker binds (the primary resolved port 0 already). */
  port: number;
  billing: HostBilling;
}

export class Supervisor {
  readonly #port: number;
  readonly #billing: HostBilling;
  readonly #slots: Slot[];
  #stopping = false;
  #url: string | undefined;
  #starting: { resolve: (url: string) => void; reject: (error: Error) => void } | undefined;

  constructor(options: SupervisorOptions) {
    this.#port = options.port;
    this.#billing = options.billing;
    this.#slots = Array.from({ length: options.workers }, (_, i) => ({
      index: i + 1,
      proc: undefined,
      host: undefined,
      exited: Promise.resolve(),
      readyAt: undefined,
      failures: 0,
      restart: undefined,
    }));
  }

  /** Starts every worker; resolves with the URL once all listen, rejects if one exits before. */
  start(): Promise<string> {
    const started = new Promise<string>((resolve, reject) => {
      this.#starting = { resolve, reject };
    });
    for (const slot of this.#slots) this.#spawn(slot);
    return started;
  }

  /** Pushes a usage event to the workers whose admin feed has readers. */
  publish(event: UsageEvent): void {
    for (const slot of this.#slots) slot.host?.publish(event);
  }

  /** Forwards `signal` to every worker and waits for all to exit; kills those still up after `waitMs`. */
  async stop(signal: NodeJS.Signals, waitMs: number): Promise<void> {
    this.#stopping = true;
    for (const slot of this.#slots) {
      clearTimeout(slot.restart);
      if (running(slot.proc)) slot.proc.kill(signal);
    }
    const all = Promise.all(this.#slots.map((slot) => slot.exited));
    const inTime = await Promise.race([all.then(() => true), Bun.sleep(waitMs).then(() => false)]);
    if (!inTime) {
      for (const slot of this.#slots) {
        if (!running(slot.proc)) continue;
        log("warn", "worker did not stop in time; killing it", { worker: slot.index, pid: slot.proc.pid });
        slot.proc.kill("SIGKILL");
      }
      await all;
    }
  }

  #spawn(slot: Slot): void {
    let proc: Subprocess | undefined;
    const host = new WorkerHost(
      slot.index,
      batched((messages) => proc?.send(messages)),
      this.#billing,
    );
    host.onReady = (url) => this.#ready(slot, url);
    let disconnected: () => void = () => {};
    const closed = new Promise<void>((resolve) => {
      disconnected = resolve;
    });
    proc = Bun.spawn(selfCommand(), {
      env: {
        ...process.env,
        MODELGATE_WORKER: String(slot.index),
        MODELGATE_WORKER_PORT: String(this.#port),
      },
      stdio: ["ignore", "inherit", "inherit"],
      serialization: "json",
      ipc: (message) => host.receive(message),
      onDisconnect: disconnected,
    });
    const pid = proc.pid;
    slot.proc = proc;
    slot.host = host;
    slot.readyAt = undefined;
    slot.exited = proc.exited.then(async (code) => {
      // Messages still in the pipe (a settlement sent just before the exit) are handled first.
      await Promise.race([closed, Bun.sleep(DISCONNECT_WAIT_MS)]);
      await this.#exited(slot, host, pid, code, proc?.signalCode ? String(proc.signalCode) : null);
    });
  }

  #ready(slot: Slot, url: string): void {
    slot.readyAt = Date.now();
    this.#url ??= url;
    log("info", "worker listening", { worker: slot.index, pid: slot.proc?.pid });
    if (this.#starting && this.#slots.every((s) => s.readyAt !== undefined)) {
      this.#starting.resolve(this.#url);
      this.#starting = undefined;
    }
  }

  async #exited(
    slot: Slot,
    host: WorkerHost,
    pid: number,
    code: number,
    signal: string | null,
  ): Promise<void> {
    const how = signal ?? `exit code ${code}`;
    const released = await host.abandon(`worker ${slot.index} (pid ${pid}) exited: ${how}`);
    if (this.#stopping) {
      if (released > 0)
        log("warn", "worker stopped holding requests; released with no charge", {
          worker: slot.index,
          released,
        });
      return;
    }
    if (this.#starting && slot.readyAt === undefined) {
      this.#starting.reject(
        new Error(`worker ${slot.index} exited before it listened (${how}); its log is above`),
      );
      this.#starting = undefined;
      return;
    }
    if (slot.readyAt !== undefined && Date.now() - slot.readyAt > HEALTHY_MS) slot.failures = 0;
    const delayMs = Math.min(RESTART_MAX_MS, RESTART_FIRST_MS * 2 ** slot.failures);
    slot.failures++;
    log("error", "worker exited unexpectedly; restarting it", {
      worker: slot.index,
      pid,
      how,
      released_requests: released,
      restart_in_ms: delayMs,
    });
    slot.restart = setTimeout(() => {
      slot.restart = undefined;
      if (!this.#stopping) this.#spawn(slot);
    }, delayMs);
  }
}
