// Usage screen: the last 30 days per model (horizontal bars) or per day (a column per day, all
// 30 of them), by cost, or by requests when nothing cost anything. Each model row says what the
// model used in its unit (images, seconds of audio, speech characters, else tokens) when the
// terminal leaves the bar room for it; the per-day total adds audio seconds and characters when
// there were any. m: per model, d: per day.
import { Box, Text, useInput } from "ink";
import { useEffect, useState } from "react";
import type { AdminApi } from "../api.ts";
import { usePoll } from "../poll.ts";
import { shortCount, type UsageRow, usd } from "../types.ts";
import { bar, columns, dayAxis, lastDays } from "./chart.ts";

export { bar } from "./chart.ts";

interface Props {
  api: AdminApi;
  height: number;
  width: number;
  /** The clock that says which 30 days are shown (tests fix it). */
  now?: () => number;
}

const DAYS = 30;
const AXIS = 9;
/** The model label, the narrowest bar, and what a row's unit cell takes (with its gap). */
const LABEL = 26;
const MIN_BAR = 10;
const UNITS = 8;

/** Seconds of audio in a usage sum (records hold milliseconds). */
const seconds = (r: UsageRow): number => Math.ceil(r.audio_ms / 1000);

/** What a model used, in its unit, in at most UNITS characters: 4 img, 905 s, 12k ch, 1.2M tok. */
export function unitsOf(r: UsageRow): string {
  if (r.generations > 0) return `${shortCount(r.generations)} img`;
  if (r.audio_ms > 0) return `${shortCount(seconds(r))} s`;
  if (r.characters > 0) return `${shortCount(r.characters)} ch`;
  return `${shortCount(r.input_tokens + r.output_tokens)} tok`;
}

const measure = (byCost: boolean) => (r: UsageRow) => (byCost ? r.cost_nanos : r.requests);
const amount = (byCost: boolean, n: number) => (byCost ? usd(n) : `${n} req`);

function PerModel({ rows, height, width }: { rows: UsageRow[]; height: number; width: number }) {
  const shown = rows.slice(0, height);
  const byCost = rows.some((r) => r.cost_nanos > 0);
  const value = measure(byCost);
  const max = Math.max(0, ...shown.map(value));
  // The label, requests and cost are always whole; the unit cell is dropped before the bar is
  // cut below MIN_BAR, so a row stays one line.
  const room = width - LABEL - 24;
  const withUnits = room - (UNITS + 1) >= MIN_BAR;
  const barWidth = Math.max(MIN_BAR, withUnits ? room - (UNITS + 1) : room);
  return (
    <>
      {shown.map((r) => (
        <Text key={r.bucket}>
          {r.bucket.slice(0, LABEL).padEnd(LABEL)}{" "}
          <Text color="green">{bar(value(r), max, barWidth).padEnd(barWidth)}</Text>{" "}
          {withUnits ? `${unitsOf(r).padStart(UNITS)} ` : ""}
          {String(r.requests).padStart(6)} req {usd(r.cost_nanos).padStart(9)}
        </Text>
      ))}
    </>
  );
}

function PerDay({ rows, height, now }: { rows: UsageRow[]; height: number; now: number }) {
  const days = lastDays(DAYS, now);
  const byDay = new Map(rows.map((r) => [r.bucket, r]));
  const byCost = rows.some((r) => r.cost_nanos > 0);
  const values = days.map((d) => {
    const row = byDay.get(d);
    return row ? measure(byCost)(row) : 0;
  });
  const max = Math.max(0, ...values);
  const chart = columns(values, Math.max(3, height - 3));
  const totalRequests = rows.reduce((n, r) => n + r.requests, 0);
  const totalCost = rows.reduce((n, r) => n + r.cost_nanos, 0);
  const totalSeconds = Math.ceil(rows.reduce((n, r) => n + r.audio_ms, 0) / 1000);
  const totalCharacters = rows.reduce((n, r) => n + r.characters, 0);
  const media = [
    ...(totalSeconds > 0 ? [`${shortCount(totalSeconds)} s audio`] : []),
    ...(totalCharacters > 0 ? [`${shortCount(totalCharacters)} ch`] : []),
  ];
  return (
    <>
      {chart.map((line, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: the rows of a chart are positions, not items
        <Text key={i}>
          {(i === 0 ? amount(byCost, max) : i === chart.length - 1 ? "0" : "").padStart(AXIS)}│
          <Text color="green">{line}</Text>
        </Text>
      ))}
      <Text>{`${" ".repeat(AXIS)}└${"─".repeat(DAYS * 2)}`}</Text>
      <Text dimColor>{`${" ".repeat(AXIS + 1)}${dayAxis(days)}`}</Text>
      <Text>
        {`${" ".repeat(AXIS + 1)}${days[0]} to ${days.at(-1)}: ${[`${totalRequests} req`, usd(totalCost), ...media].join(", ")}`}
      </Text>
    </>
  );
}

export function UsageScreen({ api, height, width, now = Date.now }: Props) {
  const [by, setBy] = useState<"model" | "day">("model");
  const usage = usePoll(async (signal) => ({ by, rows: await api.usage(by, DAYS, signal) }), 5000);
  const { reload } = usage;
  // A new grouping loads at once rather than at the next poll.
  // biome-ignore lint/correctness/useExhaustiveDependencies: `by` is the trigger, read through the poll's loader
  useEffect(() => reload(), [by, reload]);
  useInput((input) => {
    if (input === "m") setBy("model");
    if (input === "d") setBy("day");
  });
  // Rows of the other grouping (still loading) are not shown under this heading.
  const rows = usage.data?.by === by ? usage.data.rows : [];
  const byCost = rows.some((r) => r.cost_nanos > 0);
  return (
    <Box flexDirection="column">
      <Text bold>
        {by === "model" ? "Per model" : "Per day"}, last {DAYS} days, by {byCost ? "cost" : "requests"}
      </Text>
      {rows.length === 0 ? <Text dimColor>no requests in the last {DAYS} days</Text> : null}
      {rows.length > 0 && by === "model" ? <PerModel rows={rows} height={height - 2} width={width} /> : null}
      {rows.length > 0 && by === "day" ? <PerDay rows={rows} height={height - 2} now={now()} /> : null}
      {usage.error && usage.data === undefined ? <Text color="red">{usage.error}</Text> : null}
    </Box>
  );
}
