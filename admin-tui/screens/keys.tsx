// Keys screen: the key table; n creates a key through a form (the secret is shown once, with a
// copy hint), r revokes after a confirmation (y), e enables, l edits limits, allowlist, expiry and group.
import { Box, Text, useInput } from "ink";
import { useEffect, useState } from "react";
import type { AdminApi } from "../api.ts";
import { type Field, Form, list, optional, optionalInt } from "../form.tsx";
import { message, usePoll } from "../poll.ts";
import { type Column, Table } from "../table.tsx";
import { type BudgetFigure, type KeyBudgets, type KeyView, usd } from "../types.ts";

interface Props {
  api: AdminApi;
  onModal: (open: boolean) => void;
  height: number;
  /** Terminal columns the table must fit in. */
  width: number;
}

const COLUMNS: Column<KeyView>[] = [
  { title: "NAME", min: 8, cell: (k) => k.name || "-" },
  { title: "PREFIX", cell: (k) => k.prefix },
  { title: "ACCOUNT", min: 7, cell: (k) => k.account },
  { title: "STATUS", cell: (k) => k.status, color: (k) => (k.status === "enabled" ? "green" : "red") },
  { title: "TODAY/CAP", cell: (k) => `${usd(k.spent_today_nanos)}/${usd(k.daily_cap_nanos)}` },
  { title: "RPM", cell: (k) => String(k.rpm ?? "-") },
  { title: "ALLOW", min: 5, cell: (k) => (k.allow_ips.length ? k.allow_ips.join(",") : "any") },
];

const CREATE: Field[] = [
  { name: "name", label: "Name" },
  { name: "account", label: "Account", value: "default" },
  { name: "group", label: "Group", value: "default" },
  { name: "daily_cap", label: "Daily cap USD", hint: "empty: none" },
  { name: "rpm", label: "Requests/min", hint: "empty: none" },
  { name: "allow_ips", label: "Allow IPs", hint: "CIDRs, comma-separated" },
];

function editFields(k: KeyView): Field[] {
  return [
    {
      name: "daily_cap",
      label: "Daily cap USD",
      value: k.daily_cap_nanos === null ? "" : String(k.daily_cap_nanos / 1e9),
    },
    { name: "rpm", label: "Requests/min", value: k.rpm === null ? "" : String(k.rpm) },
    { name: "concurrency", label: "Concurrency", value: k.concurrency === null ? "" : String(k.concurrency) },
    { name: "allow_ips", label: "Allow IPs", value: k.allow_ips.join(","), hint: "empty: any" },
    { name: "expires_at", label: "Expires at", value: k.expires_at ?? "", hint: "RFC 3339, empty: never" },
    { name: "group", label: "Group", value: k.group },
  ];
}

/** One line of budgets: `weekly $1.20/$20.00 (reserved $0.04)`, the key's then its account's. */
function budgetLine(budgets: KeyBudgets): string | undefined {
  const one = (owner: string) => (b: BudgetFigure) =>
    `${owner}${b.period} ${usd(b.spent_nanos)}/${usd(b.limit_nanos)}${b.reserved_nanos > 0 ? ` (reserved ${usd(b.reserved_nanos)})` : ""}`;
  const parts = [...budgets.budgets.map(one("")), ...budgets.account_budgets.map(one("account "))];
  return parts.length > 0 ? `budgets: ${parts.join(", ")}` : undefined;
}

export function KeysScreen({ api, onModal, height, width }: Props) {
  const keys = usePoll((signal) => api.listKeys(signal));
  const [selected, setSelected] = useState(0);
  const [mode, setMode] = useState<"list" | "create" | "edit">("list");
  const [secret, setSecret] = useState<string>();
  const [error, setError] = useState<string>();
  const [note, setNote] = useState<string>();
  /** The key `r` asked to revoke, until y confirms or another key cancels. */
  const [revoking, setRevoking] = useState<KeyView>();
  const rows = keys.data ?? [];
  const current = rows[Math.min(selected, rows.length - 1)];
  /** The selected key's budgets line, read when the selection changes. */
  const [budgets, setBudgets] = useState<string>();
  const currentId = current?.id;
  useEffect(() => {
    setBudgets(undefined);
    if (currentId === undefined || !api.keyBudgets) return;
    const controller = new AbortController();
    api.keyBudgets(currentId, controller.signal).then(
      (figures) => {
        if (!controller.signal.aborted) setBudgets(budgetLine(figures));
      },
      () => undefined,
    );
    return () => controller.abort();
  }, [api, currentId]);

  const open = (next: "list" | "create" | "edit") => {
    setMode(next);
    setError(undefined);
    onModal(next !== "list");
  };
  const act = (work: Promise<unknown>, done: string) =>
    work.then(
      () => {
        setNote(done);
        keys.reload();
      },
      (failure: unknown) => setNote(message(failure)),
    );

  useInput(
    (input, key) => {
      if (secret !== undefined) return setSecret(undefined);
      if (revoking !== undefined) {
        // Revoking cuts off every client using the key at once: only an explicit y does it.
        onModal(false);
        setRevoking(undefined);
        if (input === "y") void act(api.setKeyStatus(revoking.id, "revoked"), `revoked ${revoking.prefix}…`);
        else setNote("revoke cancelled");
        return;
      }
      if (key.upArrow) setSelected((i) => Math.max(0, i - 1));
      else if (key.downArrow) setSelected((i) => Math.min(rows.length - 1, i + 1));
      else if (input === "n") open("create");
      else if (input === "l" && current) open("edit");
      else if (input === "r" && current && current.status !== "revoked") {
        // Modal: the screen keys (1-4, q) wait until the question is answered.
        onModal(true);
        setRevoking(current);
      } else if (input === "e" && current)
        void act(api.setKeyStatus(current.id, "enabled"), `enabled ${current.prefix}…`);
    },
    { isActive: mode === "list" },
  );

  const submitCreate = (v: Record<string, string>) => {
    api
      .createKey({
        account: v.account ?? "",
        group: v.group || "default",
        name: v.name ?? "",
        daily_cap_usd: optional(v.daily_cap),
        rpm: optionalInt(v.rpm),
        allow_ips: list(v.allow_ips),
      })
      .then(
        (created) => {
          open("list");
          setSecret(created.secret);
          setNote(`created ${created.prefix}… (${created.name || created.id})`);
          keys.reload();
        },
        (failure: unknown) => setError(message(failure)),
      );
  };
  const submitEdit = (v: Record<string, string>) => {
    if (!current) return;
    api
      .updateKey(current.id, {
        daily_cap_usd: optional(v.daily_cap),
        rpm: optionalInt(v.rpm),
        concurrency: optionalInt(v.concurrency),
        allow_ips: list(v.allow_ips),
        expires_at: optional(v.expires_at),
        ...(v.group?.trim() && v.group.trim() !== current.group ? { group: v.group.trim() } : {}),
      })
      .then(
        () => {
          open("list");
          setNote(`updated ${current.prefix}…`);
          keys.reload();
        },
        (failure: unknown) => setError(message(failure)),
      );
  };

  if (mode === "create") {
    return (
      <Form
        title="New API key"
        fields={CREATE}
        onSubmit={submitCreate}
        onCancel={() => open("list")}
        error={error}
      />
    );
  }
  if (mode === "edit" && current) {
    return (
      <Form
        title={`Limits of ${current.name || current.prefix}`}
        fields={editFields(current)}
        onSubmit={submitEdit}
        onCancel={() => open("list")}
        error={error}
      />
    );
  }
  return (
    <Box flexDirection="column">
      {secret !== undefined ? (
        <Box flexDirection="column" borderStyle="double" borderColor="yellow" paddingX={1}>
          <Text bold>New secret, shown only once. Copy it now (select with the mouse):</Text>
          <Text color="yellow">{secret}</Text>
          <Text dimColor>Press any key when you have copied it.</Text>
        </Box>
      ) : null}
      <Table
        columns={COLUMNS}
        rows={rows}
        selected={selected}
        height={height - (secret ? 4 : 0) - (budgets ? 1 : 0)}
        width={width}
        empty="no keys yet: press n"
      />
      {budgets ? <Text dimColor>{budgets}</Text> : null}
      {revoking ? (
        <Text color="yellow" bold>
          Revoke {revoking.name || revoking.id} ({revoking.prefix}…)? y revokes, any other key cancels.
        </Text>
      ) : note ? (
        <Text color="cyan">{note}</Text>
      ) : null}
      {keys.error && keys.data === undefined ? <Text color="red">{keys.error}</Text> : null}
    </Box>
  );
}
