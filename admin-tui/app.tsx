// The terminal UI: four screens (keys, accounts, live log, usage) switched with 1-4 or Tab, a
// status line saying whether the gateway answers, and a help line of the current screen's keys.
import { Box, Text, useApp, useInput } from "ink";
import { useCallback, useState } from "react";
import type { AdminApi } from "./api.ts";
import type { FeedSource, FeedState } from "./feed.ts";
import { usePoll } from "./poll.ts";
import { AccountsScreen } from "./screens/accounts.tsx";
import { KeysScreen } from "./screens/keys.tsx";
import { LogScreen } from "./screens/log.tsx";
import { UsageScreen } from "./screens/usage.tsx";

export const SCREENS = ["keys", "accounts", "log", "usage"] as const;
export type ScreenName = (typeof SCREENS)[number];

const HELP: Record<ScreenName, string> = {
  keys: "↑↓ select · n new · r revoke · e enable · l limits",
  accounts: "↑↓ select · c credit · a announce",
  log: "p pause · f filter · x clear filter · ↑↓ scroll",
  usage: "m per model · d per day",
};

interface Props {
  api: AdminApi;
  feed: FeedSource;
  initial?: ScreenName;
  /** Terminal size; defaults to 80×24. */
  columns?: number;
  rows?: number;
  /** How often the status line probes the gateway, in ms. */
  probeMs?: number;
}

export function App({ api, feed, initial = "keys", columns = 80, rows = 24, probeMs = 3000 }: Props) {
  const { exit } = useApp();
  const [screen, setScreen] = useState<ScreenName>(initial);
  const [modal, setModal] = useState(false);
  const [feedState, setFeedState] = useState<FeedState>({ kind: "connecting" });
  const onFeedState = useCallback((s: FeedState) => setFeedState(s), []);
  // A cheap probe of the gateway for the status line, independent of the screen shown.
  const probe = usePoll(async (signal) => (await api.listAccounts(signal)).length, probeMs);
  useInput(
    (input, key) => {
      if (input === "q") exit();
      const index = Number(input) - 1;
      const next = SCREENS[index];
      if (next) setScreen(next);
      if (key.tab) setScreen((s) => SCREENS[(SCREENS.indexOf(s) + 1) % SCREENS.length] ?? "keys");
    },
    { isActive: !modal },
  );
  const body = rows - 4;
  const up = probe.error === undefined;
  return (
    <Box flexDirection="column" width={columns} height={rows}>
      <Box>
        {SCREENS.map((name, i) => (
          <Text key={name} inverse={name === screen}>
            {` ${i + 1} ${name} `}
          </Text>
        ))}
        <Text color={up ? "green" : "red"}>
          {" "}
          {up ? `● ${api.url}` : `● gateway unreachable, reconnecting…`}
        </Text>
      </Box>
      <Box flexDirection="column" height={body} overflow="hidden">
        {screen === "keys" ? (
          <KeysScreen api={api} onModal={setModal} height={body - 3} width={columns} />
        ) : null}
        {screen === "accounts" ? (
          <AccountsScreen api={api} onModal={setModal} height={body - 3} width={columns} />
        ) : null}
        {screen === "usage" ? <UsageScreen api={api} height={body} width={columns} /> : null}
        {/* The log stays mounted so it keeps collecting while another screen is shown. */}
        <Box display={screen === "log" ? "flex" : "none"} flexDirection="column">
          <LogScreen
            feed={feed}
            active={screen === "log"}
            onModal={setModal}
            onFeedState={onFeedState}
            height={body}
            width={columns}
          />
        </Box>
      </Box>
      <Text color={feedState.kind === "live" ? "green" : "yellow"}>{feedLine(feedState, columns - 1)}</Text>
      <Text dimColor>
        {clip(
          modal
            ? "form: Enter next/submit · Esc cancel · a question: y or any other key"
            : `${HELP[screen]} · 1-4 screens · q quit`,
          columns - 1,
        )}
      </Text>
    </Box>
  );
}

/** The feed's state in at most `width` columns; a long reason is cut at a word, marked `…`. */
function feedLine(state: FeedState, width: number): string {
  switch (state.kind) {
    case "live":
      return "live feed connected";
    case "connecting":
      return "connecting to the live feed…";
    case "down": {
      const after = `; reconnecting in ${Math.ceil(state.retryInMs / 1000)} s`;
      const room = width - "live feed lost ()".length - after.length;
      return `live feed lost (${clip(state.reason, room)})${after}`;
    }
  }
}

/** `text` in at most `width` columns: cut after the last whole word that fits, marked `…`. */
export function clip(text: string, width: number): string {
  if (text.length <= width) return text;
  if (width <= 1) return "…".slice(0, Math.max(0, width));
  const head = text.slice(0, width - 1);
  const space = head.lastIndexOf(" ");
  return `${(space > 0 ? head.slice(0, space) : head).trimEnd()}…`;
}
