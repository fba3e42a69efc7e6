// Structured log lines on stderr: JSON for a collector, or `key=value` text for a person at a
// terminal (`server.log_format`, `--log-format`, MODELGATE_LOG_FORMAT), from a level up
// (`server.log_level`, `--log-level`, MODELGATE_LOG_LEVEL; default info). Never pass secrets or
// prompt text here.

export type Level = "debug" | "info" | "warn" | "error";
const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };
let threshold: number = ORDER.info;
/** Fields every line of this process carries (a cluster worker's number). */
let processFields: Record<string, unknown> = {};

export type LogFormat = "text" | "json";
let format: LogFormat = "json";

export function setLogLevel(level: Level): void {
  threshold = ORDER[level];
}

/** `auto` is text when stderr is a terminal and JSON otherwise (a pipe, a file, journald). */
export function setLogFormat(choice: LogFormat | "auto"): void {
  format = choice === "auto" ? (process.stderr.isTTY ? "text" : "json") : choice;
}

export function logFormat(): LogFormat {
  return format;
}

/** Adds fields to every later line of this process, after each line's own fields. */
export function setLogFields(fields: Record<string, unknown>): void {
  processFields = fields;
}

/** Writes one line: JSON `{"t":…,"level":…,"msg":…,…fields}` or `T LEVEL msg key=value…`. */
export function log(level: Level, msg: string, fields: Record<string, unknown> = {}): void {
  if (ORDER[level] < threshold) return;
  const t = new Date().toISOString();
  process.stderr.write(
    format === "json"
      ? `${JSON.stringify({ t, level, msg, ...fields, ...processFields })}\n`
      : `${t} ${level.toUpperCase().padEnd(5)} ${msg}${textFields(fields)}${textFields(processFields)}\n`,
  );
}

/**
 * ` key=value` pairs; values with spaces, quotes, `=` or control characters are JSON-quoted with
 * every control character escaped (an upstream's error text must not drive the terminal), absent
 * ones skipped.
 */
export function textFields(fields: Record<string, unknown>): string {
  let out = "";
  for (const name in fields) {
    const value = fields[name];
    if (value === undefined) continue;
    const shown = typeof value === "string" ? value : JSON.stringify(value);
    out += ` ${name}=${shown === "" || /[\s"=]/.test(shown) || hasControl(shown) ? quoted(shown) : shown}`;
  }
  return out;
}

/** C0 controls, DEL and C1 controls (U+0080–U+009F: 0x9B is a CSI on some terminals). */
const isControl = (unit: number): boolean => unit < 0x20 || (unit >= 0x7f && unit <= 0x9f);

function hasControl(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (isControl(text.charCodeAt(i))) return true;
  return false;
}

/** JSON-quoted, with DEL and C1 controls escaped too (JSON.stringify escapes only C0). */
function quoted(text: string): string {
  const json = JSON.stringify(text);
  if (!hasControl(json)) return json;
  let out = "";
  for (const char of json) {
    const unit = char.charCodeAt(0);
    out += isControl(unit) ? `\\u${unit.toString(16).padStart(4, "0")}` : char;
  }
  return out;
}
