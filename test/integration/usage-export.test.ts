// `modelgate usage` export through the compiled binary: grouping by key, account, model and day in
// any combination, CSV and JSON, date ranges, and the old flags (--group-by one, --json) unchanged.
// Every grouped export must add up to the ungrouped totals.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chat as chatTo } from "../helpers/chat-rig.ts";
import { createKey, type RunningGateway, startGateway } from "../helpers/gateway.ts";
import { keyAccepted, waitFor } from "../helpers/wait.ts";

let gw: RunningGateway;
const keys: Record<string, { secret: string; id: string }> = {};

interface Row {
  key?: string;
  account?: string;
  model?: string;
  day?: string;
  requests: number;
  input_tokens: number;
  output_tokens: number;
  cost_nanos: number;
  cost_usd: string;
}

async function chat(secret: string, model: string): Promise<void> {
  const response = await chatTo(gw, secret, { model, maxTokens: 16, prompt: "count to three" });
  expect(response.status).toBe(200);
  await response.text();
}

async function usage(args: string[]): Promise<string> {
  const result = await gw.cli(["usage", ...args]);
  if (result.code !== 0) throw new Error(`usage ${args.join(" ")} exited ${result.code}: ${result.stderr}`);
  return result.stdout;
}

async function json(args: string[]): Promise<Row[]> {
  return JSON.parse(await usage([...args, "--format", "json"])) as Row[];
}

/** A minimal RFC 4180 reader (quoted fields with doubled quotes). */
function parseCsv(text: string): Record<string, string>[] {
  const lines = text.split("\r\n").filter((l) => l !== "");
  const split = (line: string) =>
    [...line.matchAll(/("(?:[^"]|"")*"|[^,]*)(,|$)/g)]
      .filter((m, i, all) => !(i === all.length - 1 && m[0] === ""))
      .map((m) => (m[1] ?? "").replace(/^"(.*)"$/s, "$1").replaceAll('""', '"'));
  const [header, ...rows] = lines.map(split);
  return rows.map((cells) => Object.fromEntries((header ?? []).map((h, i) => [h, cells[i] ?? ""])));
}

const sum = (rows: Row[], field: "requests" | "cost_nanos" | "output_tokens") =>
  rows.reduce((total, r) => total + r[field], 0);

beforeAll(async () => {
  gw = await startGateway({ config: `[bootstrap]\nbalance_usd = "100"\n` });
  const created = await gw.cli(["accounts", "create", "acme, inc", "--balance", "50"]);
  expect(created.code).toBe(0);
  keys.a = await createKey(gw, ["--account", "default", "--name", "alpha"]);
  keys.b = await createKey(gw, ["--account", "acme, inc", "--name", "beta"]);
  // The later key seen means the earlier one is too (one store revision covers both).
  await keyAccepted(gw.url, keys.b.secret);
  await chat(keys.a.secret, "modelx-5.4-mini");
  await chat(keys.a.secret, "modelx-5.4");
  await chat(keys.b.secret, "modelx-5.4-mini");
  await chat(keys.b.secret, "modelx-5.4-mini");
  await chat(keys.b.secret, "modelx-5.5");
  // The store thread commits journalled records in batches (every 500 ms): the CLI, another
  // process, reads the store once all five are in.
  await waitFor("the five usage records in the store", async () => (await json([]))[0]?.requests === 5);
});

afterAll(async () => {
  await gw?.dispose();
});

describe("modelgate usage export", () => {
  test("grouped by account and model as CSV: one row per pair, adding up to the totals", async () => {
    const [total] = await json([]);
    expect(total?.requests).toBe(5);
    const csv = parseCsv(await usage(["--group-by", "account,model", "--format", "csv"]));
    expect(csv.map((r) => `${r.account}|${r.model}|${r.requests}`).sort()).toEqual([
      "acme, inc|modelx-5.4-mini|2",
      "acme, inc|modelx-5.5|1",
      "default|modelx-5.4-mini|1",
      "default|modelx-5.4|1",
    ]);
    expect(Object.keys(csv[0] ?? {})).toEqual([
      "account",
      "model",
      "requests",
      "input_tokens",
      "cached_input_tokens",
      "output_tokens",
      "reasoning_tokens",
      "generations",
      "web_search_calls",
      "file_search_calls",
      "web_fetch_calls",
      "image_generation_calls",
      "code_interpreter_calls",
      "audio_seconds",
      "characters",
      "cost_usd",
      "cost_nanos",
    ]);
    const costs = csv.reduce((t, r) => t + Number(r.cost_nanos), 0);
    expect(costs).toBe(total?.cost_nanos ?? -1);
  });

  test("grouped by day, key and model as JSON: model stays a column wherever it is asked", async () => {
    const today = new Date().toISOString().slice(0, 10);
    const rows = await json(["--group-by", "model,day,key"]);
    expect(rows.length).toBe(4);
    for (const r of rows) {
      expect(Object.keys(r).slice(0, 3)).toEqual(["model", "day", "key"]);
      expect(r.day).toBe(today);
    }
    expect(rows.find((r) => r.key === keys.b?.id && r.model === "modelx-5.4-mini")?.requests).toBe(2);
    const [total] = await json([]);
    expect(sum(rows, "cost_nanos")).toBe(total?.cost_nanos ?? -1);
    expect(sum(rows, "output_tokens")).toBe(total?.output_tokens ?? -1);
  });

  test("date ranges: a past range is empty, a range holding today has everything", async () => {
    expect(await json(["--group-by", "key", "--since", "2020-01-01", "--until", "2020-02-01"])).toEqual([]);
    const rows = await json(["--group-by", "account", "--since", "1d"]);
    expect(sum(rows, "requests")).toBe(5);
    expect(rows.map((r) => r.account).sort()).toEqual(["acme, inc", "default"]);
  });

  test("the old flags still work: --group-by model --json, and the table", async () => {
    const out = await gw.cli(["usage", "--group-by", "model", "--json"]);
    expect(out.code).toBe(0);
    const rows = JSON.parse(out.stdout) as Row[];
    expect(rows.map((r) => `${r.model}:${r.requests}`)).toEqual([
      "modelx-5.4:1",
      "modelx-5.4-mini:3",
      "modelx-5.5:1",
    ]);
    const table = await usage(["--group-by", "key"]);
    expect(table).toContain(keys.a?.id ?? "?");
  });

  test("--account narrows a grouping by account (and by account and day) to that account", async () => {
    const rows = await json(["--account", "acme, inc", "--group-by", "account"]);
    expect(rows.map((r) => `${r.account}:${r.requests}`)).toEqual(["acme, inc:3"]);
    const byDay = await json(["--account", "default", "--group-by", "day,account"]);
    expect(byDay.map((r) => `${r.account}:${r.requests}`)).toEqual(["default:2"]);
  });

  test("bad grouping or format is a usage error naming the flag", async () => {
    const bad = await gw.cli(["usage", "--group-by", "key,team"]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain("expected key, account, model or day");
    const twice = await gw.cli(["usage", "--group-by", "key,key"]);
    expect(twice.stderr).toContain("each dimension once");
    const format = await gw.cli(["usage", "--format", "xml"]);
    expect(format.stderr).toContain("expected table, csv or json");
  });
});
