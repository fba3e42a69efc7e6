// PostgreSQL databases for tests: each call makes its own `modelgate_test_<random>` on the server
// at 127.0.0.1:5432 (user postgres, trust auth, started by scripts/services); each test file
// drops them with `afterAll(dropPgDatabases)` (a shared module's own hook would run for one file).
// CommitCutter is a loopback proxy to PostgreSQL that loses a COMMIT's answer or the whole server.
import { type Socket, SQL, type TCPSocketListener } from "bun";

export const PG_SERVER = process.env.MODELGATE_TEST_PG ?? "postgres://postgres@127.0.0.1:5432";

const made: string[] = [];
let admin: SQL | undefined;

function server(): SQL {
  // Several connections: the drops run together (see dropPgDatabases).
  admin ??= new SQL({ url: `${PG_SERVER}/postgres`, max: 8 });
  return admin;
}

/** Creates an empty database and returns its URL. */
export async function pgDatabase(): Promise<string> {
  const name = `modelgate_test_${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`;
  await server().unsafe(`CREATE DATABASE ${name}`);
  made.push(name);
  return `${PG_SERVER}/${name}`;
}

/**
 * Drops every database this process made, all at once: each DROP DATABASE waits for a checkpoint
 * (~0.5 s, seconds on a loaded machine), and drops that wait together share one.
 */
export async function dropPgDatabases(): Promise<void> {
  const names = made.splice(0);
  await Promise.all(names.map((name) => server().unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)));
  await admin?.close();
  admin = undefined;
}

interface Link {
  upstream: Socket | undefined;
  pending: Uint8Array[];
  cut: boolean;
}

/** A TCP proxy to PostgreSQL that can lose one COMMIT's answer and refuse connections. */
export class CommitCutter {
  readonly #server: TCPSocketListener<Link>;
  /** Cut the connection that sends the next COMMIT, after the server had time to apply it. */
  cutNextCommit = false;
  /** Close new connections at once, and open ones at their next query. */
  refuse = false;
  /** Start refusing when the COMMIT is cut (the store's confirmation of it then fails too). */
  refuseAfterCut = false;
  cuts = 0;

  constructor(target: { hostname: string; port: number }) {
    this.#server = Bun.listen<Link>({
      hostname: "127.0.0.1",
      port: 0,
      socket: {
        open: (client) => {
          client.data = { upstream: undefined, pending: [], cut: false };
          if (this.refuse) {
            client.end();
            return;
          }
          void Bun.connect({
            ...target,
            socket: {
              data: (_up, bytes) => {
                if (!client.data.cut) client.write(bytes);
              },
              close: () => {
                client.end();
              },
              error: () => {
                client.end();
              },
            },
          }).then(
            (up) => {
              client.data.upstream = up;
              for (const chunk of client.data.pending.splice(0)) up.write(chunk);
            },
            () => {
              client.end();
            },
          );
        },
        data: (client, bytes) => {
          const link = client.data;
          if (this.refuse) {
            link.upstream?.end();
            client.end();
            return;
          }
          if (this.cutNextCommit && Buffer.from(bytes).includes("COMMIT")) {
            this.cutNextCommit = false;
            this.cuts++;
            link.cut = true;
            if (this.refuseAfterCut) this.refuse = true;
            setTimeout(() => {
              link.upstream?.end();
              client.end();
            }, 300);
          }
          if (link.upstream) link.upstream.write(bytes);
          else link.pending.push(new Uint8Array(bytes));
        },
        close: (client) => {
          client.data?.upstream?.end();
        },
      },
    });
  }

  url(database: string): string {
    const target = new URL(database);
    target.host = `127.0.0.1:${this.#server.port}`;
    return target.toString();
  }

  stop(): void {
    this.#server.stop(true);
  }
}
