// Bar charts drawn with block characters: horizontal bars (per model) and a column chart of
// the last 30 days (per day), both in eighths of a cell so small values still show.

const HORIZONTAL = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"];
const VERTICAL = [" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"];

/** A bar of `value / max` of `width` cells, in eighths for a smooth end. */
export function bar(value: number, max: number, width: number): string {
  if (max <= 0 || value <= 0) return "";
  const eighths = Math.max(1, Math.round((value / max) * width * 8));
  return "█".repeat(Math.floor(eighths / 8)) + (HORIZONTAL[eighths % 8] ?? "");
}

/**
 * Columns of `values` scaled to `rows` lines (top line first), each column `cell` characters
 * wide (the bar, then spaces). A non-zero value is at least one eighth high.
 */
export function columns(values: number[], rows: number, cell = 2): string[] {
  const max = Math.max(0, ...values);
  const heights = values.map((v) => (max <= 0 || v <= 0 ? 0 : Math.max(1, Math.round((v / max) * rows * 8))));
  const lines: string[] = [];
  for (let r = 0; r < rows; r++) {
    const floor = (rows - 1 - r) * 8;
    const line = heights.map((h) => (VERTICAL[Math.min(8, Math.max(0, h - floor))] ?? " ").padEnd(cell));
    lines.push(line.join(""));
  }
  return lines;
}

/** The `days` UTC days ending today, oldest first, as `YYYY-MM-DD`. */
export function lastDays(days: number, now = Date.now()): string[] {
  const today = now - (now % 86_400_000);
  return Array.from({ length: days }, (_, i) =>
    new Date(today - (days - 1 - i) * 86_400_000).toISOString().slice(0, 10),
  );
}

/** Day-of-month labels under a column chart: every fifth day, aligned to its column. */
export function dayAxis(days: string[], cell = 2): string {
  let axis = "";
  days.forEach((day, i) => {
    if (i % 5 !== 0 && i !== days.length - 1) return;
    const at = i * cell;
    if (axis.length > at) return;
    axis = axis.padEnd(at) + day.slice(8, 10);
  });
  return axis;
}
