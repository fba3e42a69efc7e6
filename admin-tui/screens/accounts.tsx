// Accounts screen: balances and what each account spent today against its keys' daily caps;
// c credits the selected account (amount and note, recorded in the ledger), a sends an announcement.
import { Box, Text, useInput } from "ink";
import { useState } from "react";
import type { AdminApi } from "../api.ts";
import { Form } from "../form.tsx";
import { message, usePoll } from "../poll.ts";
import { type Column, Table } from "../table.tsx";
import { type AccountView, type KeyView, usd } from "../types.ts";

interface Props {
  api: AdminApi;
  onModal: (open: boolean) => void;
  height: number;
  /** Terminal columns the table must fit in. */
  width: number;
}

interface Row extends AccountView {
  caps: number | null;
  keys: number;
}

const COLUMNS: Column<Row>[] = [
  { title: "ACCOUNT", min: 8, cell: (a) => a.name },
  {
    title: "BALANCE",
    cell: (a) => usd(a.balance_nanos),
    color: (a) => (a.balance_nanos <= 0 ? "red" : undefined),
  },
  { title: "SPENT TODAY", cell: (a) => usd(a.spent_today_nanos) },
  { title: "DAILY CAPS", cell: (a) => (a.caps === null ? "none" : usd(a.caps)) },
  { title: "USE", cell: (a) => (a.caps ? `${Math.round((a.spent_today_nanos / a.caps) * 100)}%` : "-") },
  { title: "KEYS", cell: (a) => String(a.keys) },
];

function rowsOf(accounts: AccountView[], keys: KeyView[]): Row[] {
  return accounts.map((a) => {
    const own = keys.filter((k) => k.account === a.name && k.status === "enabled");
    const capped = own.filter((k) => k.daily_cap_nanos !== null);
    const caps = capped.length ? capped.reduce((sum, k) => sum + (k.daily_cap_nanos ?? 0), 0) : null;
    return { ...a, caps, keys: own.length };
  });
}

export function AccountsScreen({ api, onModal, height, width }: Props) {
  const data = usePoll(async (signal) => rowsOf(await api.listAccounts(signal), await api.listKeys(signal)));
  const [selected, setSelected] = useState(0);
  const [mode, setMode] = useState<"list" | "credit" | "announce">("list");
  const [error, setError] = useState<string>();
  const [note, setNote] = useState<string>();
  const rows = data.data ?? [];
  const current = rows[Math.min(selected, rows.length - 1)];
  const open = (next: typeof mode) => {
    setMode(next);
    setError(undefined);
    onModal(next !== "list");
  };
  useInput(
    (input, key) => {
      if (key.upArrow) setSelected((i) => Math.max(0, i - 1));
      else if (key.downArrow) setSelected((i) => Math.min(rows.length - 1, i + 1));
      else if (input === "c" && current) open("credit");
      else if (input === "a") open("announce");
    },
    { isActive: mode === "list" },
  );
  const finish = (done: string) => {
    open("list");
    setNote(done);
    data.reload();
  };
  if (mode === "credit" && current) {
    return (
      <Form
        title={`Credit ${current.name} (balance ${usd(current.balance_nanos)})`}
        fields={[
          { name: "amount", label: "Amount USD", hint: "e.g. 25 or 2.50" },
          { name: "note", label: "Note", hint: "why: recorded in the ledger" },
        ]}
        onSubmit={(v) =>
          api.credit(current.name, v.amount ?? "", v.note ?? "").then(
            (a) => finish(`credited ${current.name}: balance ${usd(a.balance_nanos)}`),
            (failure: unknown) => setError(message(failure)),
          )
        }
        onCancel={() => open("list")}
        error={error}
      />
    );
  }
  if (mode === "announce") {
    return (
      <Form
        title="Announcement to every subscribed channel"
        fields={[
          { name: "title", label: "Title" },
          { name: "message", label: "Message" },
        ]}
        onSubmit={(v) =>
          api.announce(v.title ?? "", v.message ?? "").then(
            (n) => finish(`announcement sent to ${n} channel(s)`),
            (failure: unknown) => setError(message(failure)),
          )
        }
        onCancel={() => open("list")}
        error={error}
      />
    );
  }
  return (
    <Box flexDirection="column">
      <Table
        columns={COLUMNS}
        rows={rows}
        selected={selected}
        height={height}
        width={width}
        empty="no accounts"
      />
      {note ? <Text color="cyan">{note}</Text> : null}
      {data.error && data.data === undefined ? <Text color="red">{data.error}</Text> : null}
    </Box>
  );
}
