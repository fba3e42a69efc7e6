import { afterAll, expect, test } from "bun:test";
import { join } from "node:path";
import { SQL } from "bun";
import { getTableConfig, SQLiteTable } from "drizzle-orm/sqlite-core";
import { openStore } from "../../src/store/open.ts";
import * as schema from "../../src/store/sqlite/schema.ts";
import { tempDir } from "../helpers/gateway.ts";
import { storeContract } from "./store-contract.ts";
import { dropPgDatabases, pgDatabase } from "./store-pg-fixture.ts";

afterAll(dropPgDatabases);

// Each store's journal id file in a folder of its own, not in the working directory.
storeContract("PostgreSQL", async () => openStore(await pgDatabase(), join(tempDir(), "usage.log")));

test("the embedded PostgreSQL migrations build every table, column and index of schema.ts", async () => {
  const url = await pgDatabase();
  await (await openStore(url)).close();
  const client = new SQL({ url, max: 1 });
  try {
    const columns = (await client`SELECT table_name, column_name, is_nullable FROM information_schema.columns
      WHERE table_schema = 'public'`) as { table_name: string; column_name: string; is_nullable: string }[];
    const indexes = (await client`SELECT indexname FROM pg_indexes WHERE schemaname = 'public'`) as {
      indexname: string;
    }[];
    const found = columns.map(
      (c) => `${c.table_name}.${c.column_name} ${c.is_nullable === "NO" ? "not null" : "null"}`,
    );
    const expected: string[] = [];
    const expectedIndexes: string[] = [];
    for (const table of Object.values(schema)) {
      if (!(table instanceof SQLiteTable)) continue;
      const config = getTableConfig(table);
      for (const col of config.columns) {
        expected.push(`${config.name}.${col.name} ${col.notNull || col.primary ? "not null" : "null"}`);
      }
      for (const ix of config.indexes) expectedIndexes.push(ix.config.name);
    }
    expect(found.sort()).toEqual(expected.sort());
    expect(indexes.map((i) => i.indexname)).toEqual(expect.arrayContaining(expectedIndexes));
  } finally {
    await client.close();
  }
});
