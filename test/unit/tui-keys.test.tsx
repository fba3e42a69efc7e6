// The keys screen: the table, the create form and the one-time secret, revoke/enable, the limits
// form (cap, rpm, allowlist, expiry, group), API errors shown in the form, and an 80×24 fit.
import { afterEach, expect, setDefaultTimeout, test } from "bun:test";
import { cleanup } from "ink-testing-library";
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

test("the table lists keys with status, spend against cap, rpm and allowlist", async () => {
  const api = new FakeApi();
  api.keys = [
    keyView("default"),
    keyView("ci", { status: "revoked", daily_cap_nanos: 2.5e9, spent_today_nanos: 1e9, rpm: 30 }),
    keyView("office", { allow_ips: ["10.0.0.0/8"] }),
  ];
  const ui = renderApp(api, new FakeFeed());
  const frame = await shows(ui, "office");
  expect(frame).toContain("NAME");
  expect(frame).toContain("STATUS");
  const ci = lines(ui).find((l) => l.startsWith("ci "));
  expect(ci).toContain("revoked");
  expect(ci).toContain("$1.00/$2.50");
  expect(ci).toContain("30");
  expect(lines(ui).find((l) => l.startsWith("office"))).toContain("10.0.0.0/8");
  expect(lines(ui).find((l) => l.startsWith("default"))).toContain("any");
  expect(frame).toContain("n new");
  expect(frame).toContain("1-4 screens");
  expectFits(ui);
});

test("n opens the create form; submitting shows the secret once, then the key is listed", async () => {
  const api = new FakeApi();
  api.keys = [keyView("default")];
  const ui = renderApp(api, new FakeFeed());
  await shows(ui, "default");
  await press(ui, "n");
  const form = await shows(ui, "New API key");
  for (const label of ["Name", "Account", "Group", "Daily cap USD", "Requests/min", "Allow IPs"]) {
    expect(form).toContain(label);
  }
  expect(form).toContain("Esc cancel");
  expectFits(ui);
  await type(ui, "build-bot");
  await press(ui, KEYS.enter); // → account (prefilled default)
  await press(ui, KEYS.enter); // → group
  await press(ui, KEYS.enter); // → daily cap
  await type(ui, "3");
  await press(ui, KEYS.enter); // → rpm
  await type(ui, "60");
  await press(ui, KEYS.enter); // → allow ips
  await type(ui, "10.0.0.0/8, 192.168.1.1");
  const filled = await shows(ui, "192.168.1.1");
  expect(filled).toContain("build-bot");
  await press(ui, KEYS.enter); // submit
  const secret = await shows(ui, "sk-SECRET-1-only-once");
  expect(secret).toContain("shown only once");
  expect(secret).toContain("Copy it now");
  expect(secret).toContain("created sk-new1xyz");
  expectFits(ui);
  expect(api.keys.at(-1)).toMatchObject({
    name: "build-bot",
    daily_cap_nanos: 3e9,
    rpm: 60,
    allow_ips: ["10.0.0.0/8", "192.168.1.1"],
  });
  await press(ui, " "); // any key hides the secret for good
  const after = await until(ui, (f) => !f.includes("sk-SECRET-1"));
  expect(lines(ui).find((l) => l.startsWith("build-bot"))).toContain("$0.00/$3.00");
  expect(after).not.toContain("only once");
});

test("an API error keeps the form open and shows the message; Esc cancels", async () => {
  const api = new FakeApi();
  const ui = renderApp(api, new FakeFeed());
  await shows(ui, "no keys yet: press n");
  await press(ui, "n");
  await shows(ui, "New API key");
  await press(ui, KEYS.enter);
  for (let i = 0; i < 7; i++) await press(ui, KEYS.backspace); // clear "default"
  await type(ui, "ghost");
  await press(ui, KEYS.tab);
  await press(ui, KEYS.tab);
  await press(ui, KEYS.tab);
  await press(ui, KEYS.tab);
  await press(ui, KEYS.enter);
  const failed = await shows(ui, 'account "ghost" does not exist');
  expect(failed).toContain("New API key");
  await press(ui, KEYS.escape);
  await until(ui, (f) => !f.includes("New API key"));
  expect(api.keys).toEqual([]);
});

test("r asks before revoking (any key but y cancels), e enables; ↓ moves the selection", async () => {
  const api = new FakeApi();
  api.keys = [keyView("first"), keyView("second")];
  const ui = renderApp(api, new FakeFeed());
  await shows(ui, "second");
  // The selection is drawn in inverse video, which the test's frames do not carry: no text to wait
  // on, but `press` returns once the move is drawn and the app is still.
  await press(ui, KEYS.down);
  await press(ui, "r");
  await shows(ui, "Revoke second (sk-secoabc…)?");
  await press(ui, "n");
  await shows(ui, "revoke cancelled");
  expect(api.calls.filter((c) => c.startsWith("setKeyStatus"))).toEqual([]);
  await press(ui, "r");
  await shows(ui, "y revokes");
  await press(ui, "y");
  await shows(ui, "revoked sk-secoabc");
  await until(
    ui,
    () =>
      lines(ui)
        .find((l) => l.startsWith("second"))
        ?.includes("revoked") === true,
  );
  expect(lines(ui).find((l) => l.startsWith("first"))).toContain("enabled");
  await press(ui, "e");
  await shows(ui, "enabled sk-secoabc");
  expect(api.calls).toContain("setKeyStatus key_second revoked");
  expect(api.calls).toContain("setKeyStatus key_second enabled");
});

test("a burst of keys in one read is applied whole: four Backspaces, then new text", async () => {
  const api = new FakeApi();
  api.keys = [keyView("default")];
  const ui = renderApp(api, new FakeFeed());
  await shows(ui, "default");
  await press(ui, "n");
  await shows(ui, "New API key");
  await press(ui, KEYS.enter); // → account, prefilled "default"
  ui.stdin.write("\x7f\x7f\x7f\x7facme"); // one read: "def" is left, then "acme" after it
  await shows(ui, "› Account         defacme ");
  await press(ui, KEYS.enter);
  await shows(ui, "› Group");
});

test("spending is shown to the nano-dollar in one money format, and the cap column is never cut", async () => {
  const api = new FakeApi();
  api.keys = [keyView("tiny", { spent_today_nanos: 46_000, daily_cap_nanos: 500_000_000 })];
  const ui = renderApp(api, new FakeFeed());
  await shows(ui, "tiny");
  expect(lines(ui).find((l) => l.startsWith("tiny"))).toContain("$0.000046/$0.50");
  expectFits(ui);
});

test("l edits limits, allowlist, expiry and group of the selected key", async () => {
  const api = new FakeApi();
  api.keys = [keyView("ci", { rpm: 30, allow_ips: ["10.0.0.0/8"], expires_at: "2030-01-01T00:00:00.000Z" })];
  const ui = renderApp(api, new FakeFeed());
  await shows(ui, "ci");
  await press(ui, "l");
  const form = await shows(ui, "Limits of ci");
  expect(form).toContain("2030-01-01T00:00:00.000Z");
  expect(form).toContain("10.0.0.0/8");
  expectFits(ui);
  await press(ui, KEYS.tab); // rpm
  await press(ui, KEYS.backspace);
  await press(ui, KEYS.backspace);
  await type(ui, "90");
  await press(ui, KEYS.tab); // concurrency
  await type(ui, "4");
  await press(ui, KEYS.tab); // allow ips
  for (let i = 0; i < 10; i++) await press(ui, KEYS.backspace);
  await press(ui, KEYS.tab); // expiry
  await press(ui, KEYS.tab); // group
  for (let i = 0; i < 7; i++) await press(ui, KEYS.backspace);
  await type(ui, "cheap");
  await press(ui, KEYS.enter);
  await shows(ui, "updated sk-cixxabc");
  expect(api.updates).toEqual([
    {
      id: "key_ci",
      change: {
        daily_cap_usd: null,
        rpm: 90,
        concurrency: 4,
        allow_ips: [],
        expires_at: "2030-01-01T00:00:00.000Z",
        group: "cheap",
      },
    },
  ]);
});

test("forty keys scroll inside 80×24", async () => {
  const api = new FakeApi();
  api.keys = Array.from({ length: 40 }, (_, i) => keyView(`key${String(i).padStart(2, "0")}`));
  const ui = renderApp(api, new FakeFeed());
  await shows(ui, "of 40");
  expectFits(ui);
  for (let i = 0; i < 30; i++) await press(ui, KEYS.down);
  const frame = await shows(ui, "key30");
  expect(frame).not.toContain("key00");
  expectFits(ui);
});

test("the selected key's budgets and its account's show under the table, spent against limit", async () => {
  const api = new FakeApi();
  api.keys = [keyView("budgeted"), keyView("plain")];
  const asked: string[] = [];
  const figure = (period: string, spent: number, limit: number, reserved = 0) => ({
    period,
    limit_nanos: limit,
    spent_nanos: spent,
    reserved_nanos: reserved,
    remaining_nanos: limit - spent - reserved,
  });
  Object.assign(api, {
    keyBudgets: async (id: string) => {
      asked.push(id);
      return id === api.keys[0]?.id
        ? { budgets: [figure("weekly", 1.2e9, 20e9, 4e7)], account_budgets: [figure("monthly", 5e9, 50e9)] }
        : { budgets: [], account_budgets: [] };
    },
  });
  const ui = renderApp(api, new FakeFeed());
  const frame = await shows(
    ui,
    "budgets: weekly $1.20/$20.00 (reserved $0.04), account monthly $5.00/$50.00",
  );
  expect(frame).toContain("budgeted");
  expectFits(ui);
  await press(ui, KEYS.down);
  await until(ui, (frame) => asked.length === 2 && !frame.includes("budgets:"));
});
