// A cluster for integration tests: several compiled `serve` nodes on one PostgreSQL database (its
// own `modelgate_test_<random>`) and one Redis prefix (unique, deleted after), each node with its
// own directory and usage journal; the CLI against the same database; and the requests, key waits
// and usage reads the cluster tests share.
import { rmSync } from "node:fs";
import { dropPrefix, REDIS_URL, testPrefix } from "../unit/limits-redis-fixture.ts";
import { pgDatabase } from "../unit/store-pg-fixture.ts";
import { type CliResult, type RunningGateway, runCli, startGateway } from "./gateway.ts";
import { waitFor } from "./wait.ts";

export interface ClusterOptions {
  nodes?: number;
  /** TOML given to every node as --config. */
  config?: string;
  redisUrl?: string;
  /** A Redis prefix another cluster used (default a fresh one). */
  prefix?: string;
  /** Extra environment of every node. */
  env?: Record<string, string>;
}

export class Cluster {
  readonly nodes: RunningGateway[] = [];
  #stopped = new Set<RunningGateway>();

  private constructor(
    readonly db: string,
    readonly prefix: string,
    readonly redisUrl: string,
    readonly config: string | undefined,
    readonly env: Record<string, string> = {},
  ) {}

  /** Starts the nodes: the first bootstraps the empty database, the others join it. */
  static async start(options: ClusterOptions = {}): Promise<Cluster> {
    const cluster = new Cluster(
      await pgDatabase(),
      options.prefix ?? testPrefix(),
      options.redisUrl ?? REDIS_URL,
      options.config,
      options.env,
    );
    cluster.nodes.push(await cluster.startNode());
    const rest = Array.from({ length: (options.nodes ?? 3) - 1 }, () => cluster.startNode());
    cluster.nodes.push(...(await Promise.all(rest)));
    return cluster;
  }

  /**
   * One more node of this cluster (its own directory and journal); `db` reaches the same database
   * another way (through a proxy). It is stopped with the others.
   */
  async startNode(db = this.db, env: Record<string, string> = {}): Promise<RunningGateway> {
    const options: Parameters<typeof startGateway>[0] = {
      args: ["--db", db, "--redis-url", this.redisUrl, "--redis-prefix", this.prefix],
      env: { ...this.env, ...env },
    };
    if (this.config !== undefined) options.config = this.config;
    return startGateway(options);
  }

  /** Starts a node with startNode and adds it to `nodes`. */
  async addNode(db = this.db, env: Record<string, string> = {}): Promise<RunningGateway> {
    const node = await this.startNode(db, env);
    this.nodes.push(node);
    return node;
  }

  /** The node's bootstrap key (printed by the first node). */
  get bootstrapKey(): string {
    const key = this.nodes[0]?.key;
    if (!key) throw new Error("the first node printed no bootstrap key");
    return key;
  }

  node(i: number): RunningGateway {
    const node = this.nodes[i % this.nodes.length];
    if (!node) throw new Error(`no node ${i}`);
    return node;
  }

  /** Runs the CLI against the cluster's database; throws unless it exits 0. */
  async cli(args: string[]): Promise<CliResult> {
    const result = await runCli([...args, "--db", this.db]);
    if (result.code !== 0)
      throw new Error(`modelgate ${args.join(" ")} exited ${result.code}: ${result.stderr}`);
    return result;
  }

  async createKey(args: string[]): Promise<{ secret: string; id: string }> {
    const created = await this.cli(["keys", "create", ...args]);
    const id = /key_[0-9a-f]+/.exec(created.stderr)?.[0];
    if (!id) throw new Error(`no key id in: ${created.stderr}`);
    return { secret: created.stdout.trim(), id };
  }

  /** Waits until every running node knows the key (its balance endpoint answers 200). */
  async waitForKey(secret: string): Promise<void> {
    await Promise.all(
      this.running().map((node) =>
        waitFor(`node ${node.url} to learn the key`, async () => {
          const response = await fetch(`${node.url}/v1/dashboard/billing/balance`, {
            headers: { authorization: `Bearer ${secret}` },
          });
          await response.arrayBuffer();
          return response.status === 200;
        }),
      ),
    );
  }

  /** Account balances in USD from the store (PostgreSQL), by name. */
  async balanceUsd(account: string): Promise<number> {
    const out = await this.cli(["accounts", "list", "--json"]);
    const accounts = JSON.parse(out.stdout) as { name: string; balance_usd: string }[];
    const found = accounts.find((a) => a.name === account);
    if (!found) throw new Error(`no account ${account}`);
    return Number(found.balance_usd);
  }

  /** The key's usage totals from PostgreSQL (requests and cost). */
  async usageOf(keyId: string): Promise<{ requests: number; cost: number }> {
    const out = await this.cli(["usage", "--key", keyId, "--json"]);
    const row = (JSON.parse(out.stdout) as { requests: number; cost_usd: string }[])[0];
    return { requests: row?.requests ?? 0, cost: Number(row?.cost_usd ?? 0) };
  }

  /** Polls the key's usage until it counts `requests` rows (settlements are stored asynchronously). */
  async usageSettled(keyId: string, requests: number): Promise<{ requests: number; cost: number }> {
    let usage = await this.usageOf(keyId);
    for (let i = 0; i < 100 && usage.requests < requests; i++) {
      await Bun.sleep(100);
      usage = await this.usageOf(keyId);
    }
    return usage;
  }

  /** SIGKILLs a node (it stays in `nodes`, excluded from `running()`). */
  async kill(node: RunningGateway): Promise<void> {
    node.proc.kill("SIGKILL");
    await node.proc.exited;
    this.#stopped.add(node);
  }

  running(): RunningGateway[] {
    return this.nodes.filter((node) => !this.#stopped.has(node));
  }

  /** Stops every node, deletes their directories and the Redis prefix (the database is dropped per file). */
  async dispose(): Promise<void> {
    await Promise.all(this.nodes.map((node) => node.stop()));
    for (const node of this.nodes) rmSync(node.dir, { recursive: true, force: true });
    await dropPrefix(this.prefix, this.redisUrl).catch(() => 0);
  }
}

/** A Chat Completions request to a node with the key: the suite's one (test/helpers/chat-rig.ts). */
export { type ChatOptions, chat } from "./chat-rig.ts";

/** The status and error code of an answer, its body read. */
export async function outcome(response: Response): Promise<{ status: number; code: string | null }> {
  const text = await response.text();
  if (response.status === 200) return { status: 200, code: null };
  const body = JSON.parse(text) as { error?: { code?: string | null } };
  return { status: response.status, code: body.error?.code ?? null };
}
