// Budgets with periods through the compiled binary: `keys create --budget`, `keys budgets` and
// `accounts budgets` on the CLI, the admin API setting, showing (spent, reserved, remaining per
// period) and removing them with effect at once, the 429 budget_exceeded naming the period, and
// bad budgets or calendars refused naming the field, with nothing changed.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { dirname, join } from "node:path";
import {
  bootstrapAdminToken,
  createKey,
  type RunningGateway,
  serveRefuses,
  startGateway,
} from "../helpers/gateway.ts";
import { keyAccepted, waitFor } from "../helpers/wait.ts";

let gw: RunningGateway;
let token: string;

beforeAll(async () => {
  gw = await startGateway({
    config: `[bootstrap]\nbalance_usd = "100"\n[billing.budgets]\ntime_zone = "Europe/Berlin"\nmonth_reset_day = 15\n`,
  });
  token = bootstrapAdminToken(gw);
}, 60_000);

afterAll(async () => {
  await gw.dispose();
});

function admin(path: string, json?: unknown): Promise<Response> {
  return fetch(`${gw.url}/admin/v1${path}`, {
    method: json === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    ...(json === undefined ? {} : { body: JSON.stringify(json) }),
  });
}

function chat(secret: string): Promise<Response> {
  return fetch(`${gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
    body: JSON.stringify({
      model: "modelx-5.4-mini",
      max_tokens: 20,
      messages: [{ role: "user", content: "hi" }],
    }),
  });
}

interface Figure {
  period: string;
  limit_nanos: number;
  spent_nanos: number;
  reserved_nanos: number;
  remaining_nanos: number;
  period_start: string;
  period_end: string | null;
}

describe("budgets over HTTP and the CLI", () => {
  test("a key's weekly budget refuses what does not fit, shows its figures, and its removal applies at once", async () => {
    const { secret, id } = await createKey(gw, [
      "--account",
      "default",
      "--name",
      "weekly",
      "--budget",
      "weekly=1",
    ]);
    await keyAccepted(gw.url, secret);
    const ok = await chat(secret);
    expect(ok.status).toBe(200);
    await ok.text();
    const view = (await (await admin(`/keys/${id}`)).json()) as { budgets: Figure[] };
    const weekly = view.budgets.find((b) => b.period === "weekly");
    expect(weekly).toMatchObject({ limit_nanos: 1_000_000_000, reserved_nanos: 0 });
    expect(weekly?.spent_nanos).toBeGreaterThan(0);
    expect(weekly?.remaining_nanos).toBe(1_000_000_000 - (weekly?.spent_nanos ?? 0));
    // A budget lowered below what was spent: refused, naming the period; then removed, served again.
    expect((await admin(`/keys/${id}`, { budgets: { weekly: "0.000000001" } })).status).toBe(200);
    const refused = await waitFor("the lowered budget to apply", async () => {
      const r = await chat(secret);
      if (r.status === 200) {
        await r.text();
        return undefined;
      }
      return r;
    });
    expect(refused.status).toBe(429);
    const error = ((await refused.json()) as { error: { code: string; message: string } }).error;
    expect(error.code).toBe("budget_exceeded");
    expect(error.message).toContain("weekly budget");
    expect((await admin(`/keys/${id}`, { budgets: { weekly: null } })).status).toBe(200);
    await waitFor("the removed budget to apply", async () => {
      const r = await chat(secret);
      await r.text();
      return r.status === 200;
    });
    // The CLI shows and changes them too; `daily` is the daily cap.
    const config = join(dirname(gw.dbUrl.replace(/^sqlite:\/\//, "")), "modelgate.toml");
    const budgets = ["--budget", "monthly=7", "--budget", "daily=2"];
    const shown = await gw.cli(["keys", "budgets", id, ...budgets, "--json", "--config", config]);
    expect(shown.code).toBe(0);
    const rows = JSON.parse(shown.stdout) as { period: string; limit_usd: string; period_start: string }[];
    expect(rows.map((r) => `${r.period} ${r.limit_usd}`)).toEqual(["daily 2.00", "monthly 7.00"]);
    // The daily cap counts in the billing day (UTC here), not in the budgets' zone.
    expect(rows[0]?.period_start).toMatch(/T00:00:00.000Z$/);
    // Months reset on the 15th at midnight in Berlin (22:00 or 23:00 UTC the day before).
    expect(rows[1]?.period_start).toMatch(/-14T2[23]:00:00.000Z$/);
    const bad = await gw.cli(["keys", "budgets", id, "--budget", "yearly=5"]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('--budget: unknown period "yearly"');
  });

  test("an account's budgets: set, shown, refused when bad (naming the field, nothing changed), applied to every key", async () => {
    const { secret } = await createKey(gw, ["--account", "default", "--name", "acct"]);
    await keyAccepted(gw.url, secret);
    const set = await admin("/accounts/default/budgets", { monthly: "50", total: "80" });
    expect(set.status).toBe(200);
    const before = (await set.json()) as { data: Figure[] };
    expect(before.data.map((b) => b.period)).toEqual(["monthly", "total"]);
    expect(before.data[1]?.period_end).toBeNull();
    for (const [json, field] of [
      [{ yearly: "5" }, "yearly"],
      [{ weekly: "-1" }, "weekly"],
      [{ weekly: "abc" }, "weekly"],
    ] as const) {
      const refused = await admin("/accounts/default/budgets", json);
      expect(refused.status).toBe(400);
      expect(await refused.text()).toContain(field);
    }
    const after = (await (await admin("/accounts/default/budgets")).json()) as { data: Figure[] };
    expect(after.data.map((b) => [b.period, b.limit_nanos])).toEqual([
      ["monthly", 50_000_000_000],
      ["total", 80_000_000_000],
    ]);
    // A total budget below what the account spent refuses every key of it.
    expect((await admin("/accounts/default/budgets", { total: "0.000000001" })).status).toBe(200);
    const refused = await waitFor("the account budget to apply", async () => {
      const r = await chat(secret);
      if (r.status === 200) {
        await r.text();
        return undefined;
      }
      return r;
    });
    const error = ((await refused.json()) as { error: { code: string; message: string } }).error;
    expect(error).toMatchObject({ code: "budget_exceeded" });
    expect(error.message).toContain('total budget of account "default"');
    const cli = await gw.cli([
      "accounts",
      "budgets",
      "default",
      "--remove",
      "total",
      "--remove",
      "monthly",
      "--json",
    ]);
    expect(cli.code).toBe(0);
    expect(JSON.parse(cli.stdout)).toEqual([]);
    await waitFor("the removed account budget to apply", async () => {
      const r = await chat(secret);
      await r.text();
      return r.status === 200;
    });
  });

  test("a bad [billing.budgets] stops the gateway at start, naming its path", async () => {
    for (const [toml, message] of [
      ['[billing.budgets]\ntime_zone = "Mars/Olympus"', "billing.budgets.time_zone"],
      ["[billing.budgets]\nmonth_reset_day = 31", "billing.budgets.month_reset_day"],
      ['[billing.budgets]\nweek_start = "someday"', "billing.budgets.week_start"],
      ["[billing.budgets]\nnotify_at_percent = [80, 120]", "billing.budgets.notify_at_percent"],
    ] as const) {
      const result = await serveRefuses(toml);
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain(message);
    }
  });
});
