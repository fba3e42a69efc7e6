// The PostgreSQL connection budget of a cluster: three serving nodes, each with the default
// store.pool_size, after traffic that opens every pool (requests settled through the store thread,
// key and balance reloads), hold no more than the documented budget per node (docs/cluster.md,
// Connections), counted by PostgreSQL itself (pg_stat_activity of the test's own database).
import { afterAll, afterEach, expect, test } from "bun:test";
import { SQL } from "bun";
import { Cluster, chat, outcome } from "../helpers/cluster.ts";
import { dropPgDatabases } from "../unit/store-pg-fixture.ts";

// Dropping several databases takes seconds on a loaded machine.
afterAll(dropPgDatabases, 30_000);

const clusters: Cluster[] = [];
afterEach(async () => {
  for (const cluster of clusters.splice(0)) await cluster.dispose();
});

/** store.pool_size (4 by default) + the store thread's 2 + the LISTEN connection + the node lock's. */
const BUDGET_PER_NODE = 8;

async function connectionsTo(db: string): Promise<number> {
  const name = new URL(db).pathname.slice(1);
  const admin = new SQL({ url: db, max: 1 });
  try {
    const [row] = (await admin`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = ${name}
      AND pid <> pg_backend_pid()`) as { n: number }[];
    return row?.n ?? 0;
  } finally {
    await admin.close();
  }
}

test("three nodes with the default pool hold at most 8 PostgreSQL connections each, measured in pg_stat_activity", async () => {
  const c = await Cluster.start();
  clusters.push(c);
  const { secret, id } = await c.createKey(["--account", "default", "--name", "pool"]);
  await c.waitForKey(secret);
  // Concurrent requests on every node: settlements reach the store thread, reloads use the pool.
  const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => chat(c.node(i), secret)));
  for (const answer of answers) expect((await outcome(answer)).status).toBe(200);
  await c.cli(["accounts", "credit", "default", "1"]);
  expect((await c.usageSettled(id, 30)).requests).toBe(30);
  const count = await connectionsTo(c.db);
  console.log(`PostgreSQL connections of 3 nodes: ${count} (budget ${3 * BUDGET_PER_NODE})`);
  expect(count).toBeGreaterThan(0);
  expect(count).toBeLessThanOrEqual(3 * BUDGET_PER_NODE);
}, 60_000);
