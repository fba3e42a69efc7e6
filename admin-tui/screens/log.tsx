// Live request log: tails the admin event feed; f sets filters (key, model, status), x clears
// them, p pauses (new requests are kept, not shown), ↑/↓ scroll back.
import { Box, Text, useInput } from "ink";
import { useEffect, useState } from "react";
import type { FeedSource, FeedState } from "../feed.ts";
import { Form } from "../form.tsx";
import { type RequestEvent, usd } from "../types.ts";

interface Props {
  feed: FeedSource;
  /** Whether the log is the screen shown; a hidden log keeps collecting but takes no keys. */
  active: boolean;
  onModal: (open: boolean) => void;
  onFeedState: (state: FeedState) => void;
  height: number;
}

const KEEP = 1000;
export const HEADER = `${"TIME".padEnd(8)} ST  ${"ENDPOINT".padEnd(12)} ${"KEY".padEnd(8)} ${"MODEL".padEnd(16)} ${"IN/OUT".padStart(9)} ${"COST".padStart(8)} ${"LAT".padStart(6)}`;

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

/** One request in 77 columns: time, status, endpoint, key, model, tokens in/out (or images), cost, latency. */
export function line(e: RequestEvent): string {
  const time = e.at.slice(11, 19);
  const tokens = e.generations > 0 ? `${e.generations} img` : `${e.input_tokens}/${e.output_tokens}`;
  const endpoint = e.endpoint.replace("/v1/", "").slice(0, 12).padEnd(12);
  const keyName = (e.key_name || e.key_id).slice(0, 8).padEnd(8);
  const model = e.model.slice(0, 16).padEnd(16);
  return `${time} ${String(e.status).padEnd(3)} ${endpoint} ${keyName} ${model} ${tokens.slice(0, 9).padStart(9)} ${usd(e.cost_nanos).padStart(8)} ${`${e.latency_ms}ms`.padStart(6)}`;
}

export function LogScreen({ feed, active, onModal, onFeedState, height }: Props) {
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
        {summary ? ` · filter ${summary}` : ""}
        {offset > 0 ? ` · scrolled back ${offset}` : ""}
        {paused && events.length > frozen.length ? ` · ${events.length - frozen.length} new` : ""}
      </Text>
      <Text dimColor>{HEADER}</Text>
      {shown.length === 0 ? <Text dimColor>waiting for requests…</Text> : null}
      {shown.map((e) => (
        <Text key={e.request_id} color={e.status >= 400 ? "red" : undefined}>
          {line(e)}
        </Text>
      ))}
    </Box>
  );
}
