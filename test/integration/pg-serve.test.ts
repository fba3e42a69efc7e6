// The compiled binary on a PostgreSQL store: `serve --db postgres://…` bootstraps, answers a
// request made with a key the CLI created, settles it into PostgreSQL, and `modelgate usage`,
// `accounts`, `groups` and `admin token` read and write the same database. The node's usage
// journal sits at the documented default (modelgate-DB-usage.log in serve's working directory),
// and `--journal` points a CLI reader at it. Each test has its own database, dropped after.
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { chat as chatTo } from "../helpers/chat-rig.ts";
import { type RunningGateway, runCli, startGateway } from "../helpers/gateway.ts";
import { waitFor } from "../helpers/wait.ts";
import { CommitCutter, dropPgDatabases, pgDatabase } from "../unit/store-pg-fixture.ts";

afterAll(dropPgDatabases);

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function serveOnPg(db: string, args: string[] = []): Promise<RunningGateway> {
  const gw = await startGateway({ args: ["--db", db, ...args] });
  cleanups.push(() => gw.dispose());
  return gw;
}

async function cli(db: string, args: string[]) {
  const result = await runCli([...args, "--db", db]);
  if (result.code !== 0)
    throw new Error(`modelgate ${args.join(" ")} exited ${result.code}: ${result.stderr}`);
  return result;
}

const chat = (gw: RunningGateway, secret: string) => chatTo(gw, secret, { prompt: "hi" });

/** A start on PostgreSQL, CLI runs and polls of up to 5 s each: more than bun's default 5 s when loaded. */
const SERVE_TEST_MS = 30_000;

/** Sends a chat request once the gateway's key cache (it follows the store's revision) has the key. */
async function servedOnceActive(gw: RunningGateway, secret: string): Promise<number> {
  return waitFor("the key served", async () => {
    const response = await chat(gw, secret);
    await response.text();
    return response.status === 401 ? undefined : response.status;
  });
}

/** The key's usage totals once they count `requests` (the node commits its records in batches). */
function usageReaching(db: string, keyId: string, requests: number): Promise<Totals> {
  return waitFor(`${requests} requests stored`, async () => {
    const totals = await usageOf(db, keyId);
    return totals?.requests === requests ? totals : undefined;
  });
}

interface Totals {
  requests: number;
  cost_usd: string;
}

async function usageOf(db: string, keyId: string, extra: string[] = []): Promise<Totals | undefined> {
  const out = await cli(db, ["usage", "--key", keyId, "--json", ...extra]);
  return (JSON.parse(out.stdout) as Totals[])[0];
}

async function balanceUsd(db: string, account: string): Promise<number> {
  const out = await cli(db, ["accounts", "list", "--json"]);
  const accounts = JSON.parse(out.stdout) as { name: string; balance_usd: string }[];
  return Number(accounts.find((a) => a.name === account)?.balance_usd);
}

describe("serve on PostgreSQL", () => {
  test(
    "a key made by the CLI is served, settled into PostgreSQL, and reported by `modelgate usage`",
    async () => {
      const db = await pgDatabase();
      const name = new URL(db).pathname.slice(1);
      const gw = await serveOnPg(db);
      expect(gw.logs()).toContain(`"store":"${db}"`);
      expect(gw.key).toMatch(/^sk-/); // the empty database was bootstrapped

      await cli(db, ["accounts", "create", "team", "--balance", "5"]);
      await cli(db, ["groups", "set", "mini", "--models", "modelx-5.4-mini"]);
      const created = await cli(db, [
        "keys",
        "create",
        "--account",
        "team",
        "--group",
        "mini",
        "--name",
        "pg",
      ]);
      const secret = created.stdout.trim();
      const keyId = /key_[0-9a-f]+/.exec(created.stderr)?.[0] ?? "";
      expect(keyId).not.toBe("");

      expect(await servedOnceActive(gw, secret)).toBe(200);

      const totals = await usageReaching(db, keyId, 1);
      expect(totals?.requests).toBe(1);
      const cost = Number(totals?.cost_usd);
      expect(cost).toBeGreaterThan(0);
      expect(await balanceUsd(db, "team")).toBeCloseTo(5 - cost, 9);

      const token = await cli(db, ["admin", "token", "create", "--name", "ops"]);
      expect(token.stdout.trim().length).toBeGreaterThan(20);
      expect((await cli(db, ["admin", "token", "list", "--json"])).stdout).toContain('"ops"');

      const journal = join(gw.dir, `modelgate-${name}-usage.log`);
      expect(existsSync(journal)).toBe(true);
      expect(await gw.stop()).toBe(0);
      // A reader pointed at the node's journal stores nothing twice.
      expect(await usageOf(db, keyId, ["--journal", journal])).toMatchObject({ requests: 1 });
      // The same store and journal from MODELGATE_DB and MODELGATE_JOURNAL.
      const fromEnv = await runCli(["usage", "--key", keyId, "--json"], {
        MODELGATE_DB: db,
        MODELGATE_JOURNAL: journal,
      });
      expect(fromEnv.code).toBe(0);
      expect((JSON.parse(fromEnv.stdout) as Totals[])[0]).toMatchObject({ requests: 1 });
    },
    SERVE_TEST_MS,
  );

  test(
    "PostgreSQL unreachable while serving: requests go on, usage waits in the journal and is stored once it is back",
    async () => {
      const db = await pgDatabase();
      const url = new URL(db);
      const cutter = new CommitCutter({ hostname: url.hostname, port: Number(url.port || 5432) });
      cleanups.push(async () => cutter.stop());
      const gw = await serveOnPg(cutter.url(db), ["--journal", "node-a.log"]);
      const start = await balanceUsd(db, "default");
      const created = await cli(db, ["keys", "create", "--account", "default", "--name", "outage"]);
      const secret = created.stdout.trim();
      const keyId = /key_[0-9a-f]+/.exec(created.stderr)?.[0] ?? "";
      expect(await servedOnceActive(gw, secret)).toBe(200);
      expect((await usageReaching(db, keyId, 1)).requests).toBe(1);

      cutter.refuse = true; // the node loses PostgreSQL: open connections cut, new ones refused
      for (let i = 0; i < 3; i++) {
        const during = await chat(gw, secret);
        expect(during.status).toBe(200);
        await during.json();
      }
      // An absence is what is tested: 500 ms on, still nothing of the three reached PostgreSQL.
      await Bun.sleep(500);
      expect((await usageOf(db, keyId))?.requests).toBe(1); // stored nowhere but the node's journal
      expect(existsSync(join(gw.dir, "node-a.log"))).toBe(true);

      cutter.refuse = false;
      const totals = await usageReaching(db, keyId, 4);
      expect(totals?.requests).toBe(4);
      expect(await gw.stop()).toBe(0);
      expect(start - (await balanceUsd(db, "default"))).toBeCloseTo(Number(totals?.cost_usd), 9);
    },
    SERVE_TEST_MS,
  );

  test("a PostgreSQL URL without a database, a server that does not answer, or --workers is a clear error", async () => {
    const noDb = await runCli(["accounts", "list", "--db", "postgres://postgres@127.0.0.1:5432"]);
    expect(noDb.code).not.toBe(0);
    expect(noDb.stderr).toContain("names no host or database: use postgres://USER@HOST:PORT/DB");
    const down = await runCli(["accounts", "list", "--db", "postgres://postgres@127.0.0.1:1/none"]);
    expect(down.code).toBe(1);
    expect(down.stderr).toContain("cannot open the PostgreSQL store postgres://postgres@127.0.0.1:1/none");
    expect(down.stderr).toContain("check store.url (--db, MODELGATE_DB)");
    const workers = await runCli(["serve", "--workers", "2", "--db", "postgres://postgres@127.0.0.1:5432/x"]);
    expect(workers.code).toBe(1);
    expect(workers.stderr).toContain("on PostgreSQL run several nodes");
  });
});
