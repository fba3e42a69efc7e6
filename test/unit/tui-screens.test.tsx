// The accounts screen (balances, spent today against caps, credit and announcement forms), the
// usage bar charts (per model, per day), and the status line when the gateway goes away and
// comes back; every screen fits 80×24.
import { afterEach, expect, setDefaultTimeout, test } from "bun:test";
import { cleanup, render } from "ink-testing-library";
import { lastDays } from "../../admin-tui/screens/chart.ts";
import { UsageScreen } from "../../admin-tui/screens/usage.tsx";
import type { UsageRow } from "../../admin-tui/types.ts";
import {
  expectFits,
  FakeApi,
  FakeFeed,
  KEYS,
  keyView,
  lines,
  press,
  renderApp,
  shows,
  type,
  until,
} from "./tui-fixture.tsx";

setDefaultTimeout(30_000);
afterEach(() => cleanup());

function accountsApi(): FakeApi {
  const api = new FakeApi();
  api.accounts = [
    { id: 1, name: "default", balance_nanos: 10e9, spent_today_nanos: 0.5e9 },
    { id: 2, name: "acme", balance_nanos: 0, spent_today_nanos: 0 },
  ];
  api.keys = [
    keyView("a", { daily_cap_nanos: 1e9 }),
    keyView("b", { daily_cap_nanos: 1e9 }),
    keyView("c", { account: "acme" }),
    keyView("d", { account: "acme", status: "revoked", daily_cap_nanos: 5e9 }),
  ];
  return api;
}

test("accounts: balance, spent today against the sum of enabled keys' caps, key count", async () => {
  const ui = renderApp(accountsApi(), new FakeFeed(), "accounts");
  await shows(ui, "acme");
  const frame = lines(ui);
  expect(frame[1]).toBe(
    "ACCOUNT  BALANCE  SPENT TODAY  DAILY CAPS  USE  KEYS ".trimEnd().padEnd(frame[1]?.length ?? 0),
  );
  const row = (name: string) => frame.find((l) => l.startsWith(`${name} `))?.split(/\s+/);
  expect(row("default")).toEqual(["default", "$10.00", "$0.50", "$2.00", "25%", "2"]);
  expect(row("acme")).toEqual(["acme", "$0.00", "$0.00", "none", "-", "1"]);
  expect(frame.join("\n")).toContain("c credit · a announce");
  expectFits(ui);
});

test("c credits the selected account with a note; the new balance is shown", async () => {
  const api = accountsApi();
  const ui = renderApp(api, new FakeFeed(), "accounts");
  await shows(ui, "acme");
  await press(ui, KEYS.down);
  await press(ui, "c");
  const form = await shows(ui, "Credit acme (balance $0.00)");
  expect(form).toContain("Amount USD");
  expect(form).toContain("Note");
  expectFits(ui);
  await type(ui, "25");
  await press(ui, KEYS.enter);
  await type(ui, "invoice 7");
  await press(ui, KEYS.enter);
  await shows(ui, "credited acme: balance $25.00");
  expect(api.calls).toContain("credit acme 25 invoice 7");
  await until(ui, () => lines(ui).some((l) => l.startsWith("acme") && l.includes("$25.00")));
});

test("a bad amount keeps the credit form open with the API's message", async () => {
  const api = accountsApi();
  const ui = renderApp(api, new FakeFeed(), "accounts");
  await shows(ui, "acme");
  await press(ui, "c");
  await shows(ui, "Credit default");
  await type(ui, "lots");
  await press(ui, KEYS.enter);
  await type(ui, "why");
  await press(ui, KEYS.enter);
  const frame = await shows(ui, "amount_usd: expected a USD amount");
  expect(frame).toContain("Credit default");
  expect(api.accounts[0]?.balance_nanos).toBe(10e9);
});

test("a sends an announcement and says to how many channels", async () => {
  const api = accountsApi();
  const ui = renderApp(api, new FakeFeed(), "accounts");
  await shows(ui, "acme");
  await press(ui, "a");
  await shows(ui, "Announcement to every subscribed channel");
  await type(ui, "Maintenance");
  await press(ui, KEYS.enter);
  await type(ui, "Restart at 02:00");
  await press(ui, KEYS.enter);
  await shows(ui, "announcement sent to 2 channel(s)");
  expect(api.calls).toContain("announce Maintenance Restart at 02:00");
});

function usageRow(bucket: string, cost: number, requests: number, used: Partial<UsageRow> = {}): UsageRow {
  return {
    bucket,
    requests,
    errors: 0,
    input_tokens: 0,
    output_tokens: 0,
    generations: 0,
    audio_ms: 0,
    characters: 0,
    cost_nanos: cost,
    ...used,
  };
}

const blocks = (line: string | undefined) => (line ?? "").split("█").length - 1;

test("usage per model: bars proportional to cost, what was used, requests and cost beside them", async () => {
  const api = new FakeApi();
  api.usageRows.model = [
    usageRow("modelx-5.5", 4e9, 10),
    usageRow("modelx-5.4-mini", 1e9, 300),
    usageRow("modelz-sonnet-4-6", 2e9, 20),
  ];
  const ui = renderApp(api, new FakeFeed(), "usage");
  await shows(ui, "modelz-sonnet-4-6");
  const frame = lines(ui);
  expect(frame.join("\n")).toContain("Per model, last 30 days, by cost");
  const line = (bucket: string) => frame.find((l) => l.startsWith(`${bucket} `));
  // 80 columns leave the bar 21 cells beside the label, the unit cell, requests and cost.
  expect(blocks(line("modelx-5.5"))).toBe(21);
  expect(blocks(line("modelz-sonnet-4-6"))).toBe(10);
  expect(blocks(line("modelx-5.4-mini"))).toBe(5);
  expect(line("modelx-5.4-mini")).toMatch(/▎\s+0 tok\s+300 req\s+\$1\.00$/);
  expect(line("modelx-5.5")).toMatch(/█\s+0 tok\s+10 req\s+\$4\.00$/);
  expect(api.calls).toContain("usage model 30");
  expectFits(ui);
});

test("usage per day (d): a column for each of the 30 days, by requests when nothing cost anything", async () => {
  const api = new FakeApi();
  const days = lastDays(30);
  // Every day but the fifth has traffic: day i has i+1 requests.
  api.usageRows.day = days.flatMap((day, i) => (i === 4 ? [] : [usageRow(day, 0, i + 1)]));
  const ui = renderApp(api, new FakeFeed(), "usage");
  await shows(ui, "no requests in the last 30 days");
  await press(ui, "d");
  await shows(ui, `${days[0]} to ${days[29]}: 460 req, $0.00`);
  const frame = lines(ui);
  expect(frame.join("\n")).toContain("Per day, last 30 days, by requests");
  const chart = frame.filter((l) => l.includes("│"));
  expect(chart.length).toBe(15);
  expect(chart[0]?.startsWith("   30 req│")).toBe(true);
  expect(chart.at(-1)?.startsWith("        0│")).toBe(true);
  const column = (i: number) => chart.map((l) => l[10 + i * 2]).join("");
  expect(column(29)).toBe("█".repeat(15)); // the busiest day fills the height
  expect(column(4)).toBe(" ".repeat(15)); // the day without traffic is empty
  expect(column(0)).toBe(`${" ".repeat(14)}▄`); // 1 of 30 requests: half a cell
  expect(column(14)).toBe(`${" ".repeat(7)}▄${"█".repeat(7)}`); // 15 of 30: half the height
  expect(frame.some((l) => l.trimStart().startsWith(days[0]?.slice(8, 10) ?? "?"))).toBe(true);
  expect(api.calls).toContain("usage day 30");
  expectFits(ui);
  await press(ui, "m");
  await shows(ui, "Per model");
});

test("usage per model and per day: audio seconds and speech characters beside tokens and images", async () => {
  const api = new FakeApi();
  api.usageRows.model = [
    usageRow("modelx-5.5", 4e9, 10, { input_tokens: 1_200_000, output_tokens: 34_000 }),
    usageRow("modelx-image-1", 1e9, 4, { generations: 4 }),
    usageRow("modelx-transcribe-1", 1e9, 2, { audio_ms: 63_750 }),
    usageRow("modelx-tts-1-hd", 1e9, 2, { characters: 4_113 }),
  ];
  const ui = renderApp(api, new FakeFeed(), "usage");
  await shows(ui, "modelx-tts-1-hd");
  const frame = lines(ui);
  const line = (bucket: string) => frame.find((l) => l.startsWith(`${bucket} `));
  expect(line("modelx-5.5")).toMatch(/ 1\.2M tok\s+10 req\s+\$4\.00$/);
  expect(line("modelx-image-1")).toMatch(/ 4 img\s+4 req\s+\$1\.00$/);
  expect(line("modelx-transcribe-1")).toMatch(/ 64 s\s+2 req\s+\$1\.00$/);
  expect(line("modelx-tts-1-hd")).toMatch(/ 4113 ch\s+2 req\s+\$1\.00$/);
  expectFits(ui);

  const days = lastDays(30);
  api.usageRows.day = [
    usageRow(days[3] ?? "?", 1e9, 2, { audio_ms: 60_000, characters: 13_000 }),
    usageRow(days[29] ?? "?", 1e9, 3, { audio_ms: 3_750, input_tokens: 500 }),
  ];
  await press(ui, "d");
  await shows(ui, `${days[0]} to ${days[29]}: 5 req, $2.00, 64 s audio, 13k ch`);
  expectFits(ui);
});

test("usage per model on a narrow terminal: the unit cell goes before the bar is cut below 10 cells", async () => {
  const api = new FakeApi();
  api.usageRows.model = [usageRow("modelx-tts-1", 2e9, 3, { characters: 900 })];
  const ui = render(<UsageScreen api={api} height={20} width={64} />);
  const frame = await shows(ui, "modelx-tts-1");
  const row = frame.split("\n").find((l) => l.startsWith("modelx-tts-1 ")) ?? "";
  expect(row).not.toContain(" ch");
  expect(blocks(row)).toBe(14);
  expect(row).toMatch(/█\s+3 req\s+\$2\.00$/);
});

test("a gateway that goes away: status says unreachable, data stays, and it recovers", async () => {
  const api = new FakeApi();
  api.keys = [keyView("default")];
  const ui = renderApp(api, new FakeFeed(), "keys", 100);
  await shows(ui, "● http://127.0.0.1:9999");
  await shows(ui, "default");
  api.down = true;
  const down = await shows(ui, "● gateway unreachable, reconnecting…");
  expect(lines(ui).some((l) => l.startsWith("default "))).toBe(true);
  expect(down).not.toContain("Error");
  expectFits(ui);
  api.down = false;
  await shows(ui, "● http://127.0.0.1:9999");
});

test("a lost feed's long reason is cut at a word on the status line, which stays one line", async () => {
  const feed = new FakeFeed();
  const ui = renderApp(new FakeApi(), feed);
  await shows(ui, "live feed connected");
  const reason =
    "Unable to connect. Is the computer able to access the url? The gateway may be restarting after an upgrade";
  feed.state({ kind: "down", reason, retryInMs: 4000 });
  const frame = await shows(ui, "reconnecting in 4 s");
  const status = frame.split("\n").find((l) => l.startsWith("live feed lost"));
  expect(status).toBe("live feed lost (Unable to connect. Is the computer able…); reconnecting in 4 s");
  expectFits(ui);
});

test("a gateway unreachable from the start: every screen says so and none crashes", async () => {
  const api = new FakeApi();
  api.down = true;
  const ui = renderApp(api, new FakeFeed(), "keys", 100);
  await shows(ui, "gateway unreachable at http://127.0.0.1:9999");
  expectFits(ui);
  for (const [screen, text] of [
    ["2", "ACCOUNT"],
    ["4", "Per model"],
    ["3", "waiting for requests"],
  ] as const) {
    await press(ui, screen);
    await shows(ui, text);
    expect(lines(ui)[0]).toContain("gateway unreachable, reconnecting…");
    expectFits(ui);
  }
  await until(ui, () => lines(ui).join("\n").includes("1 keys"));
});
