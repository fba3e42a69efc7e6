// The plain-text form of a `list` command: rows as aligned columns under upper-case titles.

/** Prints rows as aligned columns (for the non-JSON form of `list` commands). */
export function table(rows: Record<string, unknown>[], columns: string[]): string {
  const cells = rows.map((row) => columns.map((c) => formatCell(row[c])));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((r) => r[i]?.length ?? 0)));
  const line = (values: string[]) =>
    values
      .map((value, i) => value.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd();
  return [line(columns.map((c) => c.toUpperCase())), ...cells.map(line)].join("\n");
}

function formatCell(value: unknown): string {
  if (value === null || value === undefined) return "-";
  if (Array.isArray(value)) return value.length === 0 ? "-" : value.join(",");
  // Names stored before control characters were refused are shown escaped, never sent to the terminal.
  return String(value).replace(
    /\p{Cc}/gu,
    (c) => `\\x${(c.codePointAt(0) ?? 0).toString(16).padStart(2, "0")}`,
  );
}
