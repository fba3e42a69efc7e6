// A text table with a selected row and a scrolling window. Each column is as wide as its widest
// cell; when the row would not fit the terminal, the columns that may be cut (those with a `min`)
// shrink, the rightmost first, so money and status are shown whole and a row never wraps.
import { Box, Text } from "ink";
import { colorProp } from "./color.ts";

export interface Column<T> {
  title: string;
  /** The narrowest this column may be cut to (with `…`); without it the column is never cut. */
  min?: number;
  cell: (row: T) => string;
  color?: (row: T) => string | undefined;
}

interface Props<T> {
  columns: Column<T>[];
  rows: T[];
  selected: number;
  /** Rows shown at once. */
  height: number;
  /** Terminal columns a row must fit in. */
  width: number;
  empty: string;
}

/**
 * Each column's width for these rows within `width`, and the gap between columns: two spaces
 * when the widest cells fit with them, else one, and then cut columns if still too wide.
 */
export function columnWidths<T>(
  columns: readonly Column<T>[],
  rows: readonly T[],
  width: number,
): { widths: number[]; gap: number } {
  const widths = columns.map((c) => rows.reduce((w, row) => Math.max(w, c.cell(row).length), c.title.length));
  const total = widths.reduce((sum, w) => sum + w, 0);
  const gap = total + 2 * (columns.length - 1) <= width ? 2 : 1;
  let excess = total + gap * (columns.length - 1) - width;
  for (let i = columns.length - 1; i >= 0 && excess > 0; i--) {
    const min = columns[i]?.min;
    const current = widths[i] ?? 0;
    if (min === undefined || current <= min) continue;
    const cut = Math.min(excess, current - min);
    widths[i] = current - cut;
    excess -= cut;
  }
  return { widths, gap };
}

function fit(text: string, width: number): string {
  if (text.length <= width) return text.padEnd(width);
  return width <= 1 ? "…".slice(0, width) : `${text.slice(0, width - 1)}…`;
}

export function Table<T>({ columns, rows, selected, height, width, empty }: Props<T>) {
  const { widths, gap } = columnWidths(columns, rows, width);
  const space = " ".repeat(gap);
  const start = Math.max(0, Math.min(selected - Math.floor(height / 2), rows.length - height));
  const visible = rows.slice(start, start + height);
  return (
    <Box flexDirection="column">
      <Text bold>{columns.map((c, j) => fit(c.title, widths[j] ?? 0)).join(space)}</Text>
      {rows.length === 0 ? <Text dimColor>{empty}</Text> : null}
      {visible.map((row, i) => {
        const index = start + i;
        return (
          <Text key={index} inverse={index === selected}>
            {columns.map((c, j) => (
              <Text key={c.title} {...colorProp(c.color?.(row))}>
                {fit(c.cell(row), widths[j] ?? 0)}
                {j < columns.length - 1 ? space : ""}
              </Text>
            ))}
          </Text>
        );
      })}
      {rows.length > height ? (
        <Text dimColor>
          rows {start + 1}-{start + visible.length} of {rows.length}
        </Text>
      ) : null}
    </Box>
  );
}
