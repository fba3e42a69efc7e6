// The operator CLI contract: commands, their output forms, and errors that name the problem.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { openStore } from "../../src/store/open.ts";
import { runCli, tempDir } from "../helpers/gateway.ts";

const dir = tempDir();
const db = `sqlite://${join(dir, "cli.db")}`;
const cli = (...args: string[]) => runCli([...args, "--db", db]);

// Only `serve` creates a database; the commands below work on one it made.
beforeAll(async () => (await openStore(db)).close());
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("help and a missing database", () => {
  const COMMANDS: [string[], string][] = [
    [["serve"], "modelgate serve"],
    [["sim"], "modelgate sim"],
    [["accounts"], "modelgate accounts create"],
    [["accounts", "credit"], "modelgate accounts credit"],
    [["groups", "set"], "modelgate groups set"],
    [["keys", "create"], "modelgate keys create"],
    [["usage"], "modelgate usage"],
    [["admin", "token", "create"], "modelgate admin token create"],
    [["tui"], "modelgate tui"],
  ];

  test("--help and -h print the usage of every command and subcommand, exit 0", async () => {
    for (const [command, expected] of COMMANDS) {
      for (const flag of ["--help", "-h"]) {
        const result = await runCli([...command, flag]);
        expect({ command, flag, code: result.code, usage: result.stdout.includes(expected) }).toEqual({
          command,
          flag,
          code: 0,
          usage: true,
        });
      }
    }
    const top = await runCli(["--help"]);
    expect(top.stdout).toContain("modelgate COMMAND --help");
  });

  test("a store command never creates a database: exit 2 naming the path and the fix", async () => {
    const empty = tempDir("modelgate-nodb-");
    try {
      for (const args of [["keys", "list"], ["accounts", "list"], ["usage"], ["admin", "token", "list"]]) {
        const result = await runCli(args, {}, empty);
        expect(result.code).toBe(2);
        expect(result.stderr).toContain(join(empty, "modelgate.db"));
        expect(result.stderr).toContain("--db");
        expect(result.stderr).toContain("MODELGATE_DB");
        expect(result.stderr).toContain("--config");
        expect(result.stdout).toBe("");
      }
      const named = await runCli(["accounts", "create", "x", "--db", `sqlite://${join(empty, "other.db")}`]);
      expect(named.code).toBe(2);
      expect(named.stderr).toContain(join(empty, "other.db"));
      expect(readdirSync(empty)).toEqual([]);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
    expect(existsSync(join(dir, "cli.db"))).toBe(true);
  });
});

describe("modelgate CLI", () => {
  test("the help names every admin subcommand and usage's output formats", async () => {
    const help = await runCli([]);
    expect(help.stdout + help.stderr).toContain("token revoke ID");
    expect(help.stdout + help.stderr).toContain("--format");
  });

  test("accounts create, credit and list (JSON and table)", async () => {
    expect((await cli("accounts", "create", "acme", "--balance", "12.5")).code).toBe(0);
    const credited = await cli("accounts", "credit", "acme", "0.75", "--note", "refund");
    expect(credited.code).toBe(0);
    expect(credited.stdout).toContain("13.25");
    const rows = JSON.parse((await cli("accounts", "list", "--json")).stdout) as {
      name: string;
      balance_usd: string;
      balance_nanos: number;
    }[];
    expect(rows).toEqual([
      expect.objectContaining({ name: "acme", balance_usd: "13.25", balance_nanos: 13_250_000_000 }),
    ]);
    expect((await cli("accounts", "list")).stdout).toMatch(/^NAME\s+BALANCE_USD/);
  });

  test("bad amounts and unknown accounts are explained and change nothing", async () => {
    const bad = await cli("accounts", "credit", "acme", "5.x");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("USD amount");
    const missing = await cli("accounts", "credit", "nobody", "1");
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('account "nobody" does not exist');
    const rows = JSON.parse((await cli("accounts", "list", "--json")).stdout) as { balance_usd: string }[];
    expect(rows[0]?.balance_usd).toBe("13.25");
  });

  test("groups set validates patterns against the catalog", async () => {
    expect((await cli("groups", "set", "coders", "--models", "modelx-5.3-c*,modelz-sonnet-4-6")).code).toBe(
      0,
    );
    const bad = await cli("groups", "set", "bad", "--models", "gpt-4o");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('"gpt-4o" is not a model id of the catalog');
    const groups = JSON.parse((await cli("groups", "list", "--json")).stdout) as {
      name: string;
      models: string[];
    }[];
    expect(groups).toEqual([{ name: "coders", models: ["modelx-5.3-c*", "modelz-sonnet-4-6"] }]);
  });

  test("keys create prints the secret alone on stdout; list --json has the contract fields", async () => {
    const created = await cli(
      "keys",
      "create",
      "--account",
      "acme",
      "--group",
      "coders",
      "--name",
      "ci",
      "--allow-ip",
      "10.0.0.0/8",
      "--allow-ip",
      "2001:db8::/32",
      "--daily-cap",
      "2",
      "--rpm",
      "60",
      "--concurrency",
      "3",
      "--expires-at",
      "2099-01-01T00:00:00Z",
    );
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/^sk-[A-Za-z0-9_-]{43}\n$/);
    const rows = JSON.parse((await cli("keys", "list", "--json")).stdout) as Record<string, unknown>[];
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      prefix: created.stdout.slice(0, 10),
      name: "ci",
      account: "acme",
      group: "coders",
      status: "enabled",
      expires_at: "2099-01-01T00:00:00.000Z",
      allow_ips: ["10.0.0.0/8", "2001:db8::/32"],
      daily_cap_nanos: 2_000_000_000,
      rpm: 60,
      concurrency: 3,
    });
    expect(String(rows[0]?.id)).toMatch(/^key_[0-9a-f]{16}$/);
    const revoked = await cli("keys", "revoke", String(rows[0]?.id), "--json");
    expect((JSON.parse(revoked.stdout) as { status: string }).status).toBe("revoked");
  });

  test("keys create refuses bad input with the flag named", async () => {
    const cases: [string[], string][] = [
      [["--allow-ip", "10.0.0.0/99"], "--allow-ip"],
      [["--expires-at", "tomorrow"], "--expires-at"],
      [["--expires-at", "2001-01-01T00:00:00Z"], "in the past"],
      [["--rpm", "0"], "--rpm"],
      [["--daily-cap", "lots"], "--daily-cap"],
    ];
    for (const [args, expected] of cases) {
      const result = await cli("keys", "create", "--account", "acme", ...args);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(expected);
      expect(result.stdout).toBe("");
    }
    const noGroup = await cli("keys", "create", "--account", "acme", "--group", "nope");
    expect(noGroup.code).toBe(1);
    expect(noGroup.stderr).toContain('group "nope" does not exist');
    expect((JSON.parse((await cli("keys", "list", "--json")).stdout) as unknown[]).length).toBe(1);
  });

  test("an unknown command or subcommand shows usage", async () => {
    const unknown = await cli("frobnicate");
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown command "frobnicate"');
    const sub = await cli("keys", "destroy");
    expect(sub.code).toBe(2);
    expect(sub.stderr).toContain("modelgate keys create");
  });
});
