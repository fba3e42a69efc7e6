// A fixed-width text table with a selected row and a scrolling window, for 80-column terminals.
import { Box, Text } from "ink";

export interface Column<T> {
  title: string;
  width: number;
  cell: (row: T) => string;
  color?: (row: T) => string | undefined;
}

interface Props<T> {
  columns: Column<T>[];
  rows: T[];
  selected: number;
  /** Rows shown at once. */
  height: number;
  empty: string;
}

function fit(text: string, width: number): string {
  return text.length > width ? `${text.slice(0, width - 1)}…` : text.padEnd(width);
}

export function Table<T>({ columns, rows, selected, height, empty }: Props<T>) {
  const start = Math.max(0, Math.min(selected - Math.floor(height / 2), rows.length - height));
  const visible = rows.slice(start, start + height);
  return (
    <Box flexDirection="column">
      <Text bold>{columns.map((c) => fit(c.title, c.width)).join(" ")}</Text>
      {rows.length === 0 ? <Text dimColor>{empty}</Text> : null}
      {visible.map((row, i) => {
        const index = start + i;
        return (
          <Text key={index} inverse={index === selected}>
            {columns.map((c, j) => (
              <Text key={c.title} color={c.color?.(row)}>
                {fit(c.cell(row), c.width)}
                {j < columns.length - 1 ? " " : ""}
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
