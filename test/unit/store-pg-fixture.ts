// PostgreSQL databases for tests: each call makes its own `modelgate_test_<random>` on the server
// at 127.0.0.1:5432 (user postgres, trust auth, started by scripts/services); each test file
// drops them with `afterAll(dropPgDatabases)` (a shared module's own hook would run for one file).
import { SQL } from "bun";

export const PG_SERVER = process.env.MODELGATE_TEST_PG ?? "postgres://postgres@127.0.0.1:5432";

const made: string[] = [];
let admin: SQL | undefined;

function server(): SQL {
  admin ??= new SQL({ url: `${PG_SERVER}/postgres`, max: 1 });
  return admin;
}

/** Creates an empty database and returns its URL. */
export async function pgDatabase(): Promise<string> {
  const name = `modelgate_test_${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`;
  await server().unsafe(`CREATE DATABASE ${name}`);
  made.push(name);
  return `${PG_SERVER}/${name}`;
}

/** Drops every database this process made. */
export async function dropPgDatabases(): Promise<void> {
  for (const name of made.splice(0)) {
    await server().unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
  await admin?.close();
  admin = undefined;
}
