// `modelgate usage`: totals of requests, tokens, generations, hosted tool calls, audio seconds,
// speech characters and cost from the usage records, optionally filtered by key, account and
// time, grouped by any of key, account, model and billing day, printed as a table, JSON or CSV
// (for invoices and reconciliation against provider bills).
import * as v from "valibot";
import { formatUsd } from "../base/money.ts";
import { toKeyId } from "../base/types.ts";
import { describeIssues } from "../base/validation.ts";
import type { UsageTotals } from "../store/usage/record.ts";
import { PRICED_TOOLS } from "../wire/usage-counts.ts";
import { parse } from "./flags.ts";
import { configFrom, openStoreCaughtUp, STORE_FLAGS } from "./open-store.ts";
import { table } from "./table.ts";
import { UsageError } from "./usage-error.ts";
import { DIMENSIONS, type Dimension, groupedTotals, toCsv } from "./usage-groups.ts";

export const USAGE = `usage:
  modelgate usage [--key ID] [--account NAME] [--since T] [--until T]
                  [--group-by key,account,model,day] [--format table|csv|json] [--json]
--group-by takes one dimension or several separated by commas (e.g. account,day,model); --json is
--format json. T is an RFC 3339 time (2026-05-01T12:00:00Z), a date (2026-05-01, UTC midnight) or an age such as
30m, 24h or 7d (that long before now). --since is inclusive, --until exclusive.
common: --db URL (sqlite://PATH or postgres://USER@HOST:PORT/DB) | --journal PATH | --config FILE`;

const FLAGS = {
  ...STORE_FLAGS,
  key: { type: "string" },
  account: { type: "string" },
  since: { type: "string" },
  until: { type: "string" },
  "group-by": { type: "string" },
  format: { type: "string" },
} as const;

const AGE = /^(\d+)(m|h|d)$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;
const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** Parses a time flag into ms since the epoch; `now` anchors ages. */
export function parseTime(text: string, now: number): number | undefined {
  const age = AGE.exec(text);
  if (age) return now - Number(age[1]) * UNIT_MS[age[2] as keyof typeof UNIT_MS];
  if (DATE.test(text)) return Date.parse(`${text}T00:00:00Z`);
  if (RFC3339.test(text)) return Date.parse(text);
  return undefined;
}

const TimeFlag = v.pipe(
  v.string(),
  v.check(
    (s) => parseTime(s, 0) !== undefined,
    "expected an RFC 3339 time, a YYYY-MM-DD date or an age like 24h",
  ),
);
const Flags = v.object({
  key: v.optional(v.pipe(v.string(), v.minLength(1), v.transform(toKeyId))),
  account: v.optional(v.pipe(v.string(), v.minLength(1))),
  since: v.optional(TimeFlag),
  until: v.optional(TimeFlag),
  "group-by": v.optional(
    v.pipe(
      v.string(),
      v.transform((s) => s.split(",").map((d) => d.trim())),
      v.array(v.picklist(DIMENSIONS, "expected key, account, model or day (several separated by commas)")),
      v.check((dims) => new Set(dims).size === dims.length, "expected each dimension once"),
    ),
  ),
  format: v.optional(v.picklist(["table", "csv", "json"], "expected table, csv or json")),
});

/** The column of a priced hosted tool's calls (`web_search_calls`, …). */
const toolColumn = (tool: string): string => `${tool}_calls`;

/**
 * A row: the grouping values (when grouped), then the totals, each priced hosted tool's calls;
 * cost as exact USD and nano-USD.
 */
export function usageRow(
  row: UsageTotals,
  groups: Partial<Record<Dimension, string>> = {},
  dims: readonly Dimension[] = [],
): Record<string, unknown> {
  return {
    ...Object.fromEntries(dims.map((d) => [d, groups[d] ?? null])),
    requests: row.requests,
    input_tokens: row.inputTokens,
    cached_input_tokens: row.cachedInputTokens,
    output_tokens: row.outputTokens,
    reasoning_tokens: row.reasoningTokens,
    generations: row.generations,
    ...Object.fromEntries(PRICED_TOOLS.map((tool) => [toolColumn(tool), row.toolCalls[tool]])),
    audio_seconds: row.audioMs / 1000,
    characters: row.characters,
    cost_usd: formatUsd(row.costNanos),
    cost_nanos: row.costNanos,
  };
}

const ZERO: UsageTotals = {
  group: null,
  requests: 0,
  inputTokens: 0,
  cachedInputTokens: 0,
  outputTokens: 0,
  reasoningTokens: 0,
  generations: 0,
  toolCalls: { web_search: 0, file_search: 0, web_fetch: 0, image_generation: 0, code_interpreter: 0 },
  audioMs: 0,
  characters: 0,
  costNanos: 0 as UsageTotals["costNanos"],
};

export async function usageCommand(args: string[]): Promise<void> {
  const { values, positionals } = parse(args, FLAGS, "usage");
  if (positionals.length > 0) throw new UsageError(USAGE);
  const flags = v.safeParse(Flags, values);
  if (!flags.success) {
    throw new UsageError(
      `usage: ${describeIssues(flags.issues).replace(/^group-by/, "--group-by")}\n\n${USAGE}`,
    );
  }
  const f = flags.output;
  const now = Date.now();
  const config = configFrom(values);
  const store = await openStoreCaughtUp(config);
  try {
    const dims = f["group-by"] ?? [];
    const filter = {
      keyId: f.key,
      account: f.account,
      since: f.since === undefined ? undefined : parseTime(f.since, now),
      until: f.until === undefined ? undefined : parseTime(f.until, now),
    };
    const offset = config.billing.day_utc_offset_minutes;
    const rows = await groupedTotals(store, filter, dims, offset);
    const view = rows.map((row) => usageRow(row.totals, row.groups, dims));
    const format = f.format ?? (values.json ? "json" : "table");
    if (format === "json") console.log(JSON.stringify(view));
    else if (format === "csv") process.stdout.write(toCsv(view, Object.keys(usageRow(ZERO, {}, dims))));
    else {
      // The table shows a tool's column (and the audio units) only when some row has one; CSV and
      // JSON always have all.
      const tools = PRICED_TOOLS.filter((tool) => rows.some((row) => row.totals.toolCalls[tool] > 0));
      const columns = [...dims, "requests", "input_tokens", "output_tokens", "generations"];
      const audio = [
        ...(rows.some((row) => row.totals.audioMs > 0) ? ["audio_seconds"] : []),
        ...(rows.some((row) => row.totals.characters > 0) ? ["characters"] : []),
      ];
      console.log(table(view, [...columns, ...tools.map(toolColumn), ...audio, "cost_usd"]));
    }
  } finally {
    await store.close();
  }
}
