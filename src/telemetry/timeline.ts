// The stage timeline (`server.stage_trace`, off by default): where a slow request's time goes. When
// on, each request's stages are stamped (received, body read, authenticated, decoded, admitted,
// upstream sent, upstream answered, answer ready, answer handed to the server), and beside them what
// else ran on the event loop: timers and immediates (wrapped when the timeline starts, each with
// how long its callback ran), the store thread's messages, journal writes, collections (a sentinel
// object's finalizer ran: a collection found it unreachable; a fresh one is made) and stalls
// of the event loop (a probe every 5 ms that fired more than 1 ms late). The main thread's time
// waiting for a CPU (/proc/thread-self/schedstat) is read when a request is received and finished.
// Stamps go into typed arrays allocated at the start (a ring of the last CAPACITY stamps), so the
// recording adds few objects and collections of its own; the file is written when the process
// stops (`dumpTimeline`). Off, each stamp site costs one check of `timeline`, an undefined module
// variable. bench/tail.ts reads the file.
import { closeSync, openSync, readSync, writeFileSync } from "node:fs";

/** A request's stages, in the order a non-stream text request passes them. */
export const STAGES = [
  "received",
  "body",
  "authenticated",
  "decoded",
  "admitted",
  "upstream_sent",
  "upstream_answered",
  "answered",
  "finished",
] as const;
export type StageName = (typeof STAGES)[number];

/** Events beside the stages (a stamp's kind is its index here plus STAGES.length). */
export const EVENTS = [
  /** A setTimeout callback ran (value: ms it ran). */
  "timer",
  /** A setInterval callback ran. */
  "interval",
  /** A setImmediate callback ran. */
  "immediate",
  /** A message posted to the store thread (value: ms the post took). */
  "store_post",
  /** The store thread's answer handled on the event loop (value: ms). */
  "store_reply",
  /** A journal append (value: ms of the write). */
  "journal_append",
  /** The journal emptied or compacted after a store commit (value: ms). */
  "journal_clear",
  /** A collection ran between `value` (when the sentinel was made) and this stamp (its finalizer ran). */
  "gc",
  /** The stall probe fired late (value: ms late). */
  "stall",
  /** The upstream's fetch was called. */
  "fetch_sent",
  /** The upstream's response headers arrived. */
  "fetch_headers",
] as const;
export type EventName = (typeof EVENTS)[number];

const NAMES: readonly (StageName | EventName)[] = [...STAGES, ...EVENTS];
const KIND = Object.fromEntries(NAMES.map((name, i) => [name, i])) as Record<StageName | EventName, number>;

/** Stamps kept: the last this many (24 bytes each). */
export const CAPACITY = 1 << 21;
const PROBE_MS = 5;
const STALL_MS = 1;

/** One stamp as read back from a timeline file. */
export interface Stamp {
  /** performance.now() of the stamp, ms. */
  t: number;
  kind: StageName | EventName;
  /** The request's number (stages); -1 for events. */
  request: number;
  value: number;
  /** What ran (a timer's callback: its name or the start of its source). */
  label: string;
}

export class Timeline {
  readonly #t = new Float64Array(CAPACITY);
  readonly #value = new Float64Array(CAPACITY);
  readonly #kind = new Uint8Array(CAPACITY);
  readonly #request = new Int32Array(CAPACITY);
  readonly #label = new Uint16Array(CAPACITY);
  #n = 0;
  readonly #requests = new WeakMap<object, number>();
  #nextRequest = 0;
  readonly #labels: string[] = [""];
  readonly #labelIds = new Map<string, number>([["", 0]]);
  // A collection is seen by a sentinel object's finalizer, which JSC runs after the collection
  // that found it unreachable (eden ones included; a WeakRef's target is kept longer in Bun).
  readonly #collected = new FinalizationRegistry<number>((since) => {
    this.event("gc", since);
    this.#arm();
  });
  readonly #sched: number | undefined;
  readonly #schedBuffer = Buffer.alloc(80);

  constructor() {
    try {
      this.#sched = openSync("/proc/thread-self/schedstat", "r");
    } catch {
      this.#sched = undefined;
    }
    this.#arm();
  }

  #arm(): void {
    this.#collected.register({}, performance.now());
  }

  /** Stamps a stage of the request `of` (any object standing for it: its context). */
  stage(of: object, stage: StageName, value = 0): void {
    let id = this.#requests.get(of);
    if (id === undefined) {
      id = this.#nextRequest++;
      this.#requests.set(of, id);
    }
    this.#push(performance.now(), KIND[stage], id, value, 0);
  }

  /** Stamps `received` at `at` with the main thread's CPU wait so far (ms). */
  received(of: object, at: number): void {
    const id = this.#nextRequest++;
    this.#requests.set(of, id);
    this.#push(at, KIND.received, id, this.waitMs(), 0);
  }

  /** Stamps `finished` with the main thread's CPU wait so far (ms). */
  finished(of: object): void {
    this.stage(of, "finished", this.waitMs());
  }

  /** Stamps an event now (or `at`). */
  event(name: EventName, value = 0, label = "", at = performance.now()): void {
    this.#push(at, KIND[name], -1, value, label === "" ? 0 : this.#labelId(label));
  }

  /** Stamps an event that began at `start` and ends now; its value is its length in ms. */
  span(name: EventName, start: number, label = ""): void {
    const now = performance.now();
    this.#push(start, KIND[name], -1, now - start, label === "" ? 0 : this.#labelId(label));
  }

  /** Milliseconds the main thread has waited on a run queue (schedstat's second field); 0 unread. */
  waitMs(): number {
    if (this.#sched === undefined) return 0;
    const read = readSync(this.#sched, this.#schedBuffer, 0, this.#schedBuffer.length, 0);
    const text = this.#schedBuffer.toString("latin1", 0, read);
    const first = text.indexOf(" ");
    return Number(text.slice(first + 1, text.indexOf(" ", first + 1))) / 1e6;
  }

  /** Every stamp kept, oldest first. */
  stamps(): Stamp[] {
    const count = Math.min(this.#n, CAPACITY);
    const out: Stamp[] = [];
    for (let i = this.#n - count; i < this.#n; i++) {
      const at = i % CAPACITY;
      out.push({
        t: this.#t[at] ?? 0,
        kind: NAMES[this.#kind[at] ?? 0] ?? "received",
        request: this.#request[at] ?? -1,
        value: this.#value[at] ?? 0,
        label: this.#labels[this.#label[at] ?? 0] ?? "",
      });
    }
    return out;
  }

  /** Writes the stamps to `path`, one JSON line each, oldest first. */
  dump(path: string): void {
    writeFileSync(
      path,
      this.stamps()
        .map((s) => `${JSON.stringify(s)}\n`)
        .join(""),
    );
  }

  close(): void {
    if (this.#sched !== undefined) closeSync(this.#sched);
  }

  #push(t: number, kind: number, request: number, value: number, label: number): void {
    const at = this.#n++ % CAPACITY;
    this.#t[at] = t;
    this.#kind[at] = kind;
    this.#request[at] = request;
    this.#value[at] = value;
    this.#label[at] = label;
  }

  #labelId(label: string): number {
    let id = this.#labelIds.get(label);
    if (id === undefined) {
      id = this.#labels.length;
      this.#labels.push(label);
      this.#labelIds.set(label, id);
    }
    return id;
  }
}

/** The process's timeline; undefined (the default) when `server.stage_trace` is not set. */
export let timeline: Timeline | undefined;
let dumpPath: string | undefined;
let stopProbe: (() => void) | undefined;
let restoreTimers: (() => void) | undefined;

/** Starts recording: the timeline, the timer wrappers and the stall probe. Written to `path` by dumpTimeline. */
export function startTimeline(path: string): Timeline {
  if (timeline !== undefined) return timeline;
  const started = new Timeline();
  timeline = started;
  dumpPath = path;
  // The probe first: it keeps the unwrapped setTimeout.
  stopProbe = probeStalls(started);
  restoreTimers = wrapTimers(started);
  return started;
}

/** Writes the timeline to its file and stops recording; nothing when it is off. */
export function dumpTimeline(): void {
  const recorded = timeline;
  if (recorded === undefined || dumpPath === undefined) return;
  stopProbe?.();
  restoreTimers?.();
  timeline = undefined;
  recorded.dump(dumpPath);
  recorded.close();
}

/** A callback's label: its name, else the start of its source on one line. */
function labelOf(fn: (...args: never[]) => unknown): string {
  if (fn.name !== "") return fn.name;
  return fn.toString().slice(0, 80).replace(/\s+/g, " ");
}

type Callback = (...args: unknown[]) => unknown;

function wrapped(recorder: Timeline, name: EventName, fn: Callback): Callback {
  const label = labelOf(fn);
  return function (this: unknown, ...args: unknown[]) {
    const start = performance.now();
    try {
      return fn.apply(this, args);
    } finally {
      recorder.span(name, start, label);
    }
  };
}

/** Replaces the global setTimeout, setInterval and setImmediate with ones whose callbacks are stamped. */
function wrapTimers(recorder: Timeline): () => void {
  const g = globalThis as unknown as Record<"setTimeout" | "setInterval" | "setImmediate", Callback>;
  const originals = { setTimeout: g.setTimeout, setInterval: g.setInterval, setImmediate: g.setImmediate };
  const names = { setTimeout: "timer", setInterval: "interval", setImmediate: "immediate" } as const;
  for (const key of ["setTimeout", "setInterval", "setImmediate"] as const) {
    const original = originals[key];
    g[key] = (fn: unknown, ...rest: unknown[]) =>
      original(typeof fn === "function" ? wrapped(recorder, names[key], fn as Callback) : fn, ...rest);
  }
  return () => Object.assign(g, originals);
}

/** Fires every PROBE_MS with the unwrapped timer; a firing more than STALL_MS late is a stall. */
function probeStalls(recorder: Timeline): () => void {
  const schedule = globalThis.setTimeout;
  let due = performance.now() + PROBE_MS;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const tick = () => {
    const now = performance.now();
    if (now - due > STALL_MS) recorder.event("stall", now - due, "", now);
    due = now + PROBE_MS;
    timer = schedule(tick, PROBE_MS);
    timer.unref();
  };
  timer = schedule(tick, PROBE_MS);
  timer.unref();
  return () => clearTimeout(timer);
}
