// Structured log lines on stderr. Never pass secrets or prompt text here.

type Level = "debug" | "info" | "warn" | "error";
const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };
let threshold: number = ORDER.info;
/** Fields every line of this process carries (a cluster worker's number). */
let processFields: Record<string, unknown> = {};

export function setLogLevel(level: Level): void {
  threshold = ORDER[level];
}

/** Adds fields to every later line of this process, after each line's own fields. */
export function setLogFields(fields: Record<string, unknown>): void {
  processFields = fields;
}

/** Writes one JSON line: `{"t":…,"level":…,"msg":…,…fields}`. */
export function log(level: Level, msg: string, fields: Record<string, unknown> = {}): void {
  if (ORDER[level] < threshold) return;
  process.stderr.write(
    `${JSON.stringify({ t: new Date().toISOString(), level, msg, ...fields, ...processFields })}\n`,
  );
}
