// Live request log: tails the admin event feed — every API request, refusals marked `✗` with their
// error code; columns sized to the terminal so a row never wraps: tokens, cost and error codes are
// whole, and when the row is too wide the key name, then the model, then the endpoint are cut. f sets filters
// (key, model, status), x clears them, p pauses (new requests are kept, not shown), ↑/↓ scroll back.
import { Box, Text, useInput } from "ink";
import { useEffect, useState } from "react";
import { colorProp } from "../color.ts";
import type { FeedSource, FeedState } from "../feed.ts";
import { Form } from "../form.tsx";
import { shortCount as count, type RequestEvent, usd } from "../types.ts";

interface Props {
  feed: FeedSource;
  /** Whether the log is the screen shown; a hidden log keeps collecting but takes no keys. */
  active: boolean;
  onModal: (open: boolean) => void;
  onFeedState: (state: FeedState) => void;
  height: number;
  /** Terminal columns the rows must fit in. */
  width: number;
}

const KEEP = 1000;

interface Filters {
  key: string;
  model: string;
  status: string;
}

function matches(e: RequestEvent, f: Filters): boolean {
  return (
    (f.key === "" || e.key_name.includes(f.key) || e.key_id.includes(f.key)) &&
    (f.model === "" || e.model.includes(f.model)) &&
    (f.status === "" || String(e.status).startsWith(f.status))
  );
}

/** The API endpoints by a whole short name (never cut); any other path shows what follows /v1/. */
const ENDPOINTS: Record<string, string> = {
  "/v1/dashboard/billing/balance": "balance",
  "/v1/messages/count_tokens": "count_tokens",
  "/v1/images/generations": "images",
};

export function endpointName(path: string): string {
  return ENDPOINTS[path] ?? (path.startsWith("/v1/models/") ? "models" : path.replace(/^\/v1\//, ""));
}

/** A request refused before billing: it carries the error code instead of tokens and cost. */
export const refused = (e: RequestEvent): boolean => (e.error_code ?? null) !== null && e.status >= 400;

/**
 * Column widths for the rows shown: tokens, cost and error codes whole; endpoint, key and model as
 * wide as their widest cell while the row fits, else cut (with `…`) in that order of sacrifice:
 * the key name down to 3, the model down to 10, the endpoint down to 6.
 */
export interface Layout {
  endpoint: number;
  tokens: number;
  key: number;
  model: number;
  cost: number;
}

const FIXED = 8 + 4 + 6 + 7; // time, status + mark, latency, the seven gaps

/** What a request used, in its unit: images, seconds of audio, speech characters, else tokens. */
function tokensOf(e: RequestEvent): string {
  if (e.generations > 0) return `${e.generations} img`;
  if (e.audio_ms > 0) return `${count(Math.ceil(e.audio_ms / 1000))} s`;
  if (e.characters > 0) return `${count(e.characters)} ch`;
  return `${count(e.input_tokens)}/${count(e.output_tokens)}`;
}

/** Latency in at most six characters: 950ms, 12.3s. */
const latencyOf = (ms: number): string => (ms < 10_000 ? `${ms}ms` : `${(ms / 1000).toFixed(1)}s`);

export function layout(events: readonly RequestEvent[], width: number): Layout {
  const widest = (min: number, cell: (e: RequestEvent) => string) =>
    events.reduce((w, e) => Math.max(w, cell(e).length), min);
  const tokens = widest(6, (e) => (refused(e) ? "" : tokensOf(e)));
  const codes = widest(0, (e) => (refused(e) ? (e.error_code ?? "") : ""));
  const cost = Math.max(
    widest(5, (e) => (refused(e) ? "" : usd(e.cost_nanos))),
    codes - tokens - 1,
  );
  const cells = {
    endpoint: widest(8, (e) => endpointName(e.endpoint)),
    key: widest(3, (e) => e.key_name || e.key_id || "-"),
    model: widest(5, (e) => e.model || "-"),
  };
  let excess = FIXED + tokens + cost + cells.endpoint + cells.key + cells.model - width;
  for (const [column, min] of [
    ["key", 3],
    ["model", 10],
    ["endpoint", 6],
  ] as const) {
    const cut = Math.max(0, Math.min(excess, cells[column] - min));
    cells[column] -= cut;
    excess -= cut;
  }
  return { ...cells, tokens, cost };
}

/** Cuts a cell to its width, marking the cut with `…`. */
function fit(text: string, width: number): string {
  if (text.length <= width) return text.padEnd(width);
  return width <= 1 ? "…".slice(0, width) : `${text.slice(0, width - 1)}…`;
}

export function header(l: Layout): string {
  return `${"TIME".padEnd(8)} ST   ${fit("ENDPOINT", l.endpoint)} ${fit("KEY", l.key)} ${fit("MODEL", l.model)} ${"IN/OUT".padStart(l.tokens)} ${"COST".padStart(l.cost)} ${"LAT".padStart(6)}`;
}

/**
 * One request: time, status (`✗` marks a refusal), endpoint, key, model, tokens in/out (or
 * images) and cost — or, for a refusal, its error code in their place — and latency.
 */
export function line(e: RequestEvent, l: Layout): string {
  const time = e.at.slice(11, 19);
  const status = `${e.status}${refused(e) ? "✗" : " "}`;
  const spent = refused(e)
    ? fit(e.error_code ?? "", l.tokens + 1 + l.cost)
    : `${tokensOf(e).padStart(l.tokens)} ${usd(e.cost_nanos).padStart(l.cost)}`;
  return `${time} ${status.padEnd(4)} ${fit(endpointName(e.endpoint), l.endpoint)} ${fit(e.key_name || e.key_id || "-", l.key)} ${fit(e.model || "-", l.model)} ${spent} ${latencyOf(e.latency_ms).padStart(6)}`;
}

/** A React key per event received: request ids are the client's `x-request-id` and may repeat. */
const rowKeys = new WeakMap<RequestEvent, number>();
let lastRowKey = 0;
function rowKey(e: RequestEvent): number {
  let key = rowKeys.get(e);
  if (key === undefined) {
    key = ++lastRowKey;
    rowKeys.set(e, key);
  }
  return key;
}

export function LogScreen({ feed, active, onModal, onFeedState, height, width }: Props) {
  const [events, setEvents] = useState<RequestEvent[]>([]);
  const [paused, setPaused] = useState(false);
  const [frozen, setFrozen] = useState<RequestEvent[]>([]);
  const [scroll, setScroll] = useState(0);
  const [filters, setFilters] = useState<Filters>({ key: "", model: "", status: "" });
  const [editing, setEditing] = useState(false);
  useEffect(
    () => feed.subscribe((e) => setEvents((old) => [...old.slice(-(KEEP - 1)), e]), onFeedState),
    [feed, onFeedState],
  );
  useInput(
    (input, key) => {
      if (input === "p") {
        setFrozen(events);
        setPaused((p) => !p);
        setScroll(0);
      } else if (input === "f") {
        setEditing(true);
        onModal(true);
      } else if (input === "x") setFilters({ key: "", model: "", status: "" });
      else if (key.upArrow) setScroll((s) => s + 1);
      else if (key.downArrow) setScroll((s) => Math.max(0, s - 1));
    },
    { isActive: active && !editing },
  );
  if (editing) {
    const close = () => {
      setEditing(false);
      onModal(false);
    };
    return (
      <Form
        title="Filter the log (empty: any)"
        fields={[
          { name: "key", label: "Key name or id", value: filters.key },
          { name: "model", label: "Model", value: filters.model },
          { name: "status", label: "Status", value: filters.status, hint: "e.g. 200, 4, 429" },
        ]}
        onSubmit={(v) => {
          setFilters({ key: v.key ?? "", model: v.model ?? "", status: v.status ?? "" });
          close();
        }}
        onCancel={close}
      />
    );
  }
  const source = (paused ? frozen : events).filter((e) => matches(e, filters));
  const rows = height - 2;
  const maxScroll = Math.max(0, source.length - rows);
  const offset = Math.min(scroll, maxScroll);
  const shown = source.slice(Math.max(0, source.length - rows - offset), source.length - offset);
  const columns = layout(shown, width);
  const refusals = source.filter(refused).length;
  const summary = [
    filters.key && `key~${filters.key}`,
    filters.model && `model~${filters.model}`,
    filters.status && `status=${filters.status}*`,
  ]
    .filter(Boolean)
    .join(" ");
  return (
    <Box flexDirection="column">
      <Text>
        <Text bold>{paused ? "PAUSED" : "LIVE"}</Text> {source.length} request(s)
        {refusals > 0 ? `, ${refusals} refused` : ""}
        {summary ? ` · filter ${summary}` : ""}
        {offset > 0 ? ` · scrolled back ${offset}` : ""}
        {paused && events.length > frozen.length ? ` · ${events.length - frozen.length} new` : ""}
      </Text>
      <Text dimColor>{header(columns)}</Text>
      {shown.length === 0 ? <Text dimColor>waiting for requests…</Text> : null}
      {shown.map((e) => (
        <Text key={rowKey(e)} {...colorProp(e.status >= 400 ? "red" : undefined)}>
          {line(e, columns)}
        </Text>
      ))}
    </Box>
  );
}
