// The usage journal: where a settled request's usage record becomes durable when the store is a
// local SQLite file. One append (one write(2) per batch, no fsync — the same promise as SQLite's
// WAL with synchronous=NORMAL) survives a crash of the process; the store receives the records
// later in large transactions, which writes far fewer pages per record than a transaction per
// request and keeps WAL checkpoints (and their fsync stalls) rare. Each record carries a sequence
// number and the store keeps the last number it received in the same transaction as the records,
// so a restart replays exactly what the store had not received, never a record twice.
//
// One process owns a journal: a `.pid` lock file next to it, taken with O_EXCL and taken over
// only from a process that is gone. While records keep arriving the store never catches up to an
// empty journal, so a large one is compacted: its lines the store still lacks are written to a new
// file renamed over it (a crash before the rename leaves the old file, a superset: the replay
// skips what the store has).
import {
  appendFileSync,
  closeSync,
  existsSync,
  fstatSync,
  ftruncateSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { log } from "../base/log.ts";
import { timeline } from "../telemetry/timeline.ts";
import type { DurableLog, LogRange } from "./writer.ts";

export interface JournalEntry<T> {
  seq: number;
  item: T;
}

/**
 * A journal this large is compacted once the store lacks at most a quarter of its lines: the lines
 * rewritten are then few, and a store that falls behind is never made to rewrite its backlog.
 */
const COMPACT_BYTES = 1 << 20;

export class Journal<T> implements DurableLog<T> {
  readonly path: string;
  readonly #lockPath: string;
  #fd: number;
  #seq = 0;
  /** The file's length: only this process writes it. */
  #size: number;
  /** Lines appended since the file was last emptied or compacted. */
  #lines = 0;
  #lastRange: LogRange | undefined;

  private constructor(path: string, lockPath: string, fd: number) {
    this.path = path;
    this.#lockPath = lockPath;
    this.#fd = fd;
    this.#size = fstatSync(fd).size;
  }

  /** Opens the journal at `path`; undefined when another running process owns it. */
  static open<T>(path: string): Journal<T> | undefined {
    const lockPath = `${path}.pid`;
    if (!takeLock(lockPath)) return undefined;
    return new Journal<T>(path, lockPath, openSync(path, "a+"));
  }

  /** The entries in the file, oldest first; a torn last line (power loss mid-write) is skipped. */
  entries(): JournalEntry<T>[] {
    return parseJournalLines<T>(readFileSync(this.path, "utf8"), this.path);
  }

  /** Empties the file; the next append is numbered `after + 1`. */
  restart(after: number): void {
    this.clear();
    this.#seq = after;
  }

  append(items: readonly T[]): number {
    const before = this.#seq;
    let text = "";
    for (const item of items) text += `${++this.#seq}\t${JSON.stringify(item)}\n`;
    const bytes = encoded(text);
    const start = timeline === undefined ? 0 : performance.now();
    try {
      writeAll(this.#fd, bytes);
      if (timeline !== undefined) timeline.span("journal_append", start, String(items.length));
      this.#lastRange = { path: this.path, from: this.#size, to: this.#size + bytes.length };
      this.#size += bytes.length;
      this.#lines += items.length;
    } catch (error) {
      // Nothing of a failed append stays: no half line for the next append to be glued to, and
      // no numbers used, so the batch can be committed elsewhere and never come back in a replay.
      ftruncateSync(this.#fd, this.#size);
      this.#seq = before;
      throw error;
    }
    return this.#seq;
  }

  /**
   * Where the last append's lines lie in the file: a store commit names the bytes (the store
   * thread reads them itself) instead of copying their text across threads.
   */
  get lastRange(): LogRange | undefined {
    return this.#lastRange;
  }

  clear(): void {
    const start = timeline === undefined ? 0 : performance.now();
    ftruncateSync(this.#fd, 0);
    if (timeline !== undefined) timeline.span("journal_clear", start, "clear");
    this.#size = 0;
    this.#lines = 0;
  }

  /**
   * Once the file is large, replaces it by its bytes from `from` on: its last `count` lines, which
   * the store lacks (they then start at 0). Whether it did.
   */
  compact(count: number, from: number): boolean {
    if (this.#size < COMPACT_BYTES || count * 4 > this.#lines) return false;
    const started = performance.now();
    const next = `${this.path}.next`;
    const bytes = readBytes(this.#fd, from, this.#size);
    try {
      const fd = openSync(next, "w");
      try {
        writeAll(fd, bytes);
      } finally {
        closeSync(fd);
      }
      renameSync(next, this.path);
    } catch (error) {
      // The old file stays whole: compaction waits for the next chance.
      rmSync(next, { force: true });
      log("warn", "usage journal: compaction failed", {
        journal: this.path,
        error: error instanceof Error ? error.message : String(error),
      });
      return false;
    }
    closeSync(this.#fd);
    this.#fd = openSync(this.path, "a+");
    this.#size = bytes.length;
    this.#lines = count;
    if (timeline !== undefined) timeline.span("journal_clear", started, "compact");
    return true;
  }

  close(): void {
    closeSync(this.#fd);
    try {
      if (readFileSync(this.#lockPath, "utf8") === String(process.pid)) unlinkSync(this.#lockPath);
    } catch {
      // already gone
    }
  }
}

/** The entries of journal text (`SEQ<TAB>JSON` lines), oldest first; unreadable lines are skipped. */
export function parseJournalLines<T>(text: string, source: string): JournalEntry<T>[] {
  const entries: JournalEntry<T>[] = [];
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const tab = line.indexOf("\t");
    try {
      const seq = Number(line.slice(0, tab));
      if (tab < 1 || !Number.isSafeInteger(seq)) throw new Error("no sequence number");
      entries.push({ seq, item: JSON.parse(line.slice(tab + 1)) as T });
    } catch (error) {
      log("warn", "usage journal: skipped an unreadable line", {
        journal: source,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }
  return entries;
}

/** The text of a run of journal lines (read by the store thread: the event loop sends only where they are). */
export function readLines(range: LogRange): string {
  const fd = openSync(range.path, "r");
  try {
    return readBytes(fd, range.from, range.to).toString("utf8");
  } finally {
    closeSync(fd);
  }
}

function readBytes(fd: number, from: number, to: number): Buffer {
  const bytes = Buffer.allocUnsafe(to - from);
  for (let got = 0; got < bytes.length; ) {
    const read = readSync(fd, bytes, got, bytes.length - got, from + got);
    if (read === 0) throw new Error(`the journal ends before byte ${from + got} of ${to}`);
    got += read;
  }
  return bytes;
}

function writeAll(fd: number, bytes: Uint8Array): void {
  for (let written = 0; written < bytes.length; ) written += writeSync(fd, bytes, written);
}

const encoder = new TextEncoder();
/** The largest append encoded in the reused buffer; a larger one gets a buffer of its own. */
const SCRATCH_MAX_BYTES = 1 << 20;
/** Where appends are encoded: reused, so an append allocates no buffer (Buffer.from did, per batch). */
let scratch: Uint8Array | undefined;

/** `text` as UTF-8, in the reused buffer when it fits: valid until the next call. */
function encoded(text: string): Uint8Array {
  // At most 3 bytes per UTF-16 unit (a surrogate pair is 4 bytes for 2 units).
  const most = text.length * 3;
  if (most > SCRATCH_MAX_BYTES) return Buffer.from(text);
  if (scratch === undefined || most > scratch.length) scratch = new Uint8Array(Math.max(most, 64 * 1024));
  return scratch.subarray(0, encoder.encodeInto(text, scratch).written);
}

/** Where replayed records go: the usage store's commit with the journal number, and that number. */
export interface JournalSink<T> {
  /** The last journal number the store received (0 when none). */
  journalSeq(): Promise<number>;
  /** Stores the items and, in the same transaction, `seq` as the last number received. */
  commit(items: readonly T[], seq?: number): Promise<unknown>;
}

/** The lines of a file (none when it does not exist). */
function linesIn(path: string): Set<string> {
  return new Set(existsSync(path) ? readFileSync(path, "utf8").split("\n") : []);
}

/**
 * Stores the journal's entries the sink has not received, `batch` per transaction, then empties
 * the journal (numbering continues after the last stored number). Returns how many were stored.
 */
export async function replayJournal<T>(
  journal: Journal<T>,
  sink: JournalSink<T>,
  batch: number,
  problemOf: (item: unknown) => string | undefined,
): Promise<number> {
  const stored = await sink.journalSeq();
  const missing = journal.entries().filter((entry) => entry.seq > stored);
  let setAsideBefore: Set<string> | undefined;
  const readable = missing.filter((entry) => {
    const problem = problemOf(entry.item);
    if (problem === undefined) return true;
    setAsideBefore ??= linesIn(`${journal.path}.rejected`);
    setAside(journal.path, entry, problem, setAsideBefore);
    return false;
  });
  for (let i = 0; i < readable.length; i += batch) {
    const chunk = readable.slice(i, i + batch);
    await sink.commit(
      chunk.map((entry) => entry.item),
      chunk.at(-1)?.seq,
    );
  }
  journal.restart(Math.max(stored, missing.at(-1)?.seq ?? 0));
  return readable.length;
}

/**
 * Keeps a journal line that is not a record (another version's shape, a hand edit) in
 * `JOURNAL.rejected` for the operator, instead of failing every replay and so every start. Once:
 * a replay whose commit failed (and so the start) sets the same lines aside at the next start,
 * and the operator must find each record there once, not store it twice.
 */
function setAside<T>(path: string, entry: JournalEntry<T>, problem: string, before: Set<string>): void {
  const rejected = `${path}.rejected`;
  const line = `${entry.seq}\t${JSON.stringify(entry.item)}`;
  if (!before.has(line)) appendFileSync(rejected, `${line}\n`);
  log("error", "usage journal: a line is not a usage record; it was set aside, not stored", {
    journal: path,
    seq: entry.seq,
    problem,
    setAsideIn: rejected,
  });
}

/**
 * For readers of the store (the CLI): when the journal at `path` exists and no running process
 * owns it (the server was killed), stores its records the store lacks, so every durable record
 * is counted. Returns how many were stored; undefined when a running server owns the journal
 * (it stores them itself within moments) or there is none.
 */
export async function catchUpJournal<T>(
  path: string | undefined,
  sink: JournalSink<T>,
  batch: number,
  problemOf: (item: unknown) => string | undefined,
): Promise<number | undefined> {
  if (path === undefined || !existsSync(path)) return undefined;
  const journal = Journal.open<T>(path);
  if (!journal) return undefined;
  try {
    return await replayJournal(journal, sink, batch, problemOf);
  } finally {
    journal.close();
  }
}

/** Creates the lock file with our pid; takes it over when its owner is no longer running. */
function takeLock(lockPath: string): boolean {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockPath, "wx");
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const owner = Number(readFileSync(lockPath, "utf8").trim());
    if (owner === process.pid) return true;
    if (Number.isInteger(owner) && owner > 0 && isRunning(owner)) return false;
    unlinkSync(lockPath);
  }
  return false;
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
