// Usage screen: the last 30 days per model or per day, as a horizontal bar chart of cost
// (requests when nothing cost anything). m: per model, d: per day.
import { Box, Text, useInput } from "ink";
import { useState } from "react";
import type { AdminApi } from "../api.ts";
import { usePoll } from "../poll.ts";
import { type UsageRow, usd } from "../types.ts";

interface Props {
  api: AdminApi;
  height: number;
  width: number;
}

const DAYS = 30;

/** A bar of `value / max` of `width` cells, in eighths for a smooth end. */
export function bar(value: number, max: number, width: number): string {
  if (max <= 0 || value <= 0) return "";
  const eighths = Math.max(1, Math.round((value / max) * width * 8));
  const partial = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"][eighths % 8] ?? "";
  return "█".repeat(Math.floor(eighths / 8)) + partial;
}

export function UsageScreen({ api, height, width }: Props) {
  const [by, setBy] = useState<"model" | "day">("model");
  const usage = usePoll(() => api.usage(by, DAYS), 5000);
  useInput((input) => {
    if (input === "m") setBy("model");
    if (input === "d") setBy("day");
  });
  const rows: UsageRow[] = (usage.data ?? []).slice(-(height - 2));
  const byCost = rows.some((r) => r.cost_nanos > 0);
  const value = (r: UsageRow) => (byCost ? r.cost_nanos : r.requests);
  const max = Math.max(0, ...rows.map(value));
  const label = by === "model" ? 26 : 10;
  const barWidth = Math.max(10, width - label - 24);
  return (
    <Box flexDirection="column">
      <Text bold>
        {by === "model" ? "Per model" : "Per day"}, last {DAYS} days, by {byCost ? "cost" : "requests"}
      </Text>
      {rows.length === 0 ? <Text dimColor>no requests in the last {DAYS} days</Text> : null}
      {rows.map((r) => (
        <Text key={r.bucket}>
          {r.bucket.slice(0, label).padEnd(label)}{" "}
          <Text color="green">{bar(value(r), max, barWidth).padEnd(barWidth)}</Text>{" "}
          {String(r.requests).padStart(6)} req {usd(r.cost_nanos).padStart(9)}
        </Text>
      ))}
      {usage.error && usage.data === undefined ? <Text color="red">{usage.error}</Text> : null}
    </Box>
  );
}
