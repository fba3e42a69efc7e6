// One node in cluster mode against one node on SQLite, side by side:
//   bun bench/cluster-node.ts [--rounds 3] [--seconds 5] [--c 32] [--rate 1500] [--warmup 5]
//                             [--warmup-requests 20000] [--bin PATH] [--before PATH] [--pg-memory]
//                             [--profile DIR]
// Starts the bench upstream (pinned to the load core), a private redis-server on a free port, a
// fresh PostgreSQL database per round (127.0.0.1:5432, dropped after) reached through a counting
// loopback proxy, and per round, in alternating order, two modelgate nodes with the same channel,
// key and limits: `sqlite` (the in-memory limiter) and `pg-redis` (`--db postgres://…` and
// `--redis-url`). Each node is warmed up first by closed-loop runs of --warmup seconds until it
// served --warmup-requests (the JIT's compiler thread spends tens of µs a request for the first
// ~15,000; a loaded machine serves fewer in the same time). Per node and round: the added p50 at
// concurrency 1 (node p50 − upstream p50, wrk, one connection); closed-loop req/s with --c
// connections and the node's CPU µs per request in that loop; the CPU µs per request at a fixed
// --rate (the same requests per second for every node, so costs per second and batch sizes are
// alike; 0 skips it); each split by thread (the event loop `main`, the store thread `Worker`,
// the JIT's `JITWorker`, Bun's `HTTP Client`, the rest); and for pg-redis the round trips per
// request to Redis (EVALSHA/EVAL calls, INFO commandstats) and to PostgreSQL (Sync and
// simple-Query messages the proxy forwarded), plus redis-server CPU µs per request. With
// --before (another build of modelgate, e.g. the previous release) a third node,
// `pg-redis-before`, runs that build in cluster mode in the same rounds, so a change's cost is
// read side by side. With --pg-memory a node on PostgreSQL with the in-memory limiter runs too,
// which splits the cluster node's cost between the store and Redis. Prints medians of the rounds and each round's ratio to the SQLite node as
// JSON. The machine is shared and noisy: read the spread of the rounds, not one figure. With
// --profile DIR each node writes a CPU profile of its main thread there (Bun's --cpu-prof-md).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { RedisClient, type Socket, SQL, type TCPSocketListener } from "bun";
import { writeVocabulary } from "../scripts/vocabulary.ts";
import {
  freePort,
  LOAD_CORE,
  loadAverage,
  logTail,
  type Proc,
  runBounded,
  spawnPinned,
  TARGET_CORE,
  threadTimes,
  waitReady,
} from "./procs.ts";
import { writeBodyFile } from "./requests.ts";
import { percentile } from "./stats.ts";
import { type BenchContext, CHAT_PATH, type ModelgateServer, startModelgateServer } from "./targets.ts";
import { connectionsFor, wrk } from "./wrk.ts";

const { values } = parseArgs({
  options: {
    rounds: { type: "string", default: "3" },
    seconds: { type: "string", default: "5" },
    c: { type: "string", default: "32" },
    warmup: { type: "string", default: "5" },
    "warmup-requests": { type: "string", default: "20000" },
    rate: { type: "string", default: "1500" },
    bin: { type: "string" },
    before: { type: "string" },
    profile: { type: "string" },
    "pg-memory": { type: "boolean" },
  },
});
const ROUNDS = Number(values.rounds);
const SECONDS = Number(values.seconds);
const C = Number(values.c);
const WARMUP = Number(values.warmup);
const WARMUP_REQUESTS = Number(values["warmup-requests"]);
const RATE = Number(values.rate);
const PG = process.env.MODELGATE_BENCH_PG ?? "postgres://postgres@127.0.0.1:5432";
const ROOT = join(import.meta.dir, "..");

type NodeName = "sqlite" | "pg-memory" | "pg-redis" | "pg-redis-before";

interface Sample {
  addedP50Us: number;
  rps: number;
  cpuUsPerRequest: number;
  /** µs per request by thread name (main, Worker, JITWorker, HTTP Client, …). */
  threads: Record<string, number>;
  /** The same at --rate requests per second. */
  pacedCpuUsPerRequest?: number;
  pacedThreads?: Record<string, number>;
  redisTripsPerRequest?: number;
  redisCpuUsPerRequest?: number;
  pgTripsPerRequest?: number;
  pacedRedisTripsPerRequest?: number;
  pacedPgTripsPerRequest?: number;
}

/**
 * A loopback TCP proxy to PostgreSQL that counts the round trips clients start: each extended-
 * protocol Sync ('S') and each simple Query ('Q') message ends with the server's ReadyForQuery.
 */
class PgTripCounter {
  trips = 0;
  readonly #server: TCPSocketListener<unknown>;

  constructor(target: { hostname: string; port: number }) {
    const counter = this;
    interface Link {
      upstream: Socket<unknown> | undefined;
      pending: Uint8Array[];
      buffer: Uint8Array;
      started: boolean;
    }
    this.#server = Bun.listen<Link>({
      hostname: "127.0.0.1",
      port: 0,
      socket: {
        open(client) {
          client.data = { upstream: undefined, pending: [], buffer: new Uint8Array(0), started: false };
          void Bun.connect({
            hostname: target.hostname,
            port: target.port,
            socket: {
              open(upstream) {
                client.data.upstream = upstream;
                for (const chunk of client.data.pending.splice(0)) upstream.write(chunk);
              },
              data(_upstream, chunk) {
                client.write(chunk);
              },
              close() {
                client.end();
              },
            },
          });
        },
        data(client, chunk) {
          counter.#count(client.data, chunk);
          if (client.data.upstream) client.data.upstream.write(chunk);
          else client.data.pending.push(new Uint8Array(chunk));
        },
        close(client) {
          client.data.upstream?.end();
        },
      },
    });
  }

  /** Frames the client's messages: the startup message has no type byte, every later one does. */
  #count(link: { buffer: Uint8Array; started: boolean }, chunk: Uint8Array): void {
    const joined = new Uint8Array(link.buffer.length + chunk.length);
    joined.set(link.buffer);
    joined.set(chunk, link.buffer.length);
    const view = new DataView(joined.buffer);
    let at = 0;
    for (;;) {
      if (!link.started) {
        if (joined.length - at < 4) break;
        const length = view.getInt32(at);
        if (joined.length - at < length) break;
        // An SSLRequest (length 8) is answered by one byte, then the real startup message follows.
        if (!(length === 8 && view.getInt32(at + 4) === 80877103)) link.started = true;
        at += length;
        continue;
      }
      if (joined.length - at < 5) break;
      const length = view.getInt32(at + 1);
      if (joined.length - at < 1 + length) break;
      const type = joined[at];
      if (type === 0x53 || type === 0x51) this.trips++;
      at += 1 + length;
    }
    link.buffer = joined.slice(at);
  }

  url(db: string): string {
    const url = new URL(db);
    url.hostname = "127.0.0.1";
    url.port = String(this.#server.port);
    return url.toString();
  }

  stop(): void {
    this.#server.stop(true);
  }
}

async function buildBinary(dir: string): Promise<string> {
  say("building the executable");
  writeVocabulary();
  const outfile = join(dir, "bin", "modelgate");
  const out = await runBounded(
    [process.execPath, "build", "--compile", "--splitting", join(ROOT, "src/main.ts"), "--outfile", outfile],
    300_000,
  );
  if (out.code !== 0) throw new Error(`bun build --compile failed:\n${out.stderr}${out.stdout}`);
  return outfile;
}

/** Redis commands the clients sent (scripts count once) and the server's CPU seconds. */
async function redisCounters(admin: RedisClient): Promise<{ trips: number; cpu: number }> {
  const stats = String(await admin.send("INFO", ["commandstats"]));
  let trips = 0;
  for (const match of stats.matchAll(/^cmdstat_(evalsha|eval):calls=(\d+)/gm)) trips += Number(match[2]);
  const cpu = String(await admin.send("INFO", ["cpu"]));
  const seconds = (name: string) => Number(new RegExp(`^${name}:([0-9.]+)`, "m").exec(cpu)?.[1] ?? 0);
  return { trips, cpu: seconds("used_cpu_sys") + seconds("used_cpu_user") };
}

/** A wrk run and the node's CPU during it: µs per request in all, and by thread (those ≥ 0.5). */
async function measured(
  pid: number,
  run: () => ReturnType<typeof wrk>,
): Promise<{ run: Awaited<ReturnType<typeof wrk>>; cpuUs: number; threads: Record<string, number> }> {
  const before = threadTimes(pid);
  const result = await run();
  const threads: Record<string, number> = {};
  let ns = 0;
  for (const [thread, after] of threadTimes(pid)) {
    const spent = after - (before.get(thread) ?? 0);
    ns += spent;
    const us = spent / 1000 / result.requests;
    if (us >= 0.5) threads[thread] = Number(us.toFixed(1));
  }
  return { run: result, cpuUs: ns / 1000 / result.requests, threads };
}

/** Bun's options that make a node write its CPU profile on exit (with --profile). */
function profileEnv(label: string): Record<string, string> {
  if (values.profile === undefined) return {};
  return { BUN_OPTIONS: `--cpu-prof-md --cpu-prof-dir=${values.profile} --cpu-prof-name=${label}.md` };
}

function say(line: string): void {
  console.error(`[cluster-node] ${line}`);
}

const dir = mkdtempSync(join(tmpdir(), "modelgate-bench-cluster-"));
const owned: Proc[] = [];
const admin = new SQL({ url: `${PG}/postgres`, max: 1 });
const dbPrefix = `modelgate_bench_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
const made: string[] = [];
let counter: PgTripCounter | undefined;
let redis: RedisClient | undefined;
try {
  const modelgateBin = values.bin ?? (await buildBinary(dir));
  const upstreamPort = freePort();
  const upstream = spawnPinned({
    name: "upstream",
    cmd: [process.execPath, join(import.meta.dir, "upstream.ts"), String(upstreamPort)],
    core: LOAD_CORE,
    dir,
  });
  owned.push(upstream);
  await waitReady(upstream, async () => (await fetch(`http://127.0.0.1:${upstreamPort}/stats`)).ok);
  const redisPort = freePort();
  const redisProc = spawnPinned({
    name: "redis",
    cmd: [
      "redis-server",
      "--port",
      String(redisPort),
      "--bind",
      "127.0.0.1",
      "--save",
      "",
      "--appendonly",
      "no",
    ],
    core: LOAD_CORE,
    dir,
  });
  owned.push(redisProc);
  const redisUrl = `redis://127.0.0.1:${redisPort}`;
  await waitReady(redisProc, async () => {
    const probe = new RedisClient(redisUrl, { autoReconnect: false });
    try {
      return (await probe.send("PING", [])) === "PONG";
    } catch {
      return false;
    } finally {
      probe.close();
    }
  });
  redis = new RedisClient(redisUrl);
  const pgUrl = new URL(PG);
  counter = new PgTripCounter({ hostname: pgUrl.hostname, port: Number(pgUrl.port || 5432) });
  const ctx: BenchContext = {
    dir,
    upstream,
    upstreamPort,
    modelgateBin,
    peersDir: "",
    fileLimit: 0,
  };
  const bodyFile = writeBodyFile(dir);
  const direct = { url: `http://127.0.0.1:${upstreamPort}${CHAT_PATH}`, headers: {}, bodyFile };

  const samples: Record<NodeName, Sample[]> = {
    sqlite: [],
    "pg-memory": [],
    "pg-redis": [],
    "pg-redis-before": [],
  };
  const names: NodeName[] = [
    "sqlite",
    ...(values["pg-memory"] ? (["pg-memory"] as const) : []),
    "pg-redis",
    ...(values.before ? (["pg-redis-before"] as const) : []),
  ];
  const loads: string[] = [loadAverage()];
  for (let round = 0; round < ROUNDS; round++) {
    // Each round starts with another node (rotated), so no node always runs first.
    const order = names.map((_, i) => names[(i + round) % names.length] as NodeName);
    for (const name of order) {
      const label = `${name}-${round}`;
      const clustered = name !== "sqlite";
      const shared = name !== "sqlite" && name !== "pg-memory";
      // A fresh database per PostgreSQL node, as the SQLite node gets a fresh file.
      const db = `${dbPrefix}_${round}_${name.replaceAll("-", "_")}`;
      if (clustered) {
        await admin.unsafe(`CREATE DATABASE ${db}`);
        made.push(db);
      }
      const binary = name === "pg-redis-before" && values.before ? values.before : modelgateBin;
      const server: ModelgateServer = await startModelgateServer(
        { ...ctx, modelgateBin: binary },
        clustered
          ? {
              label,
              workers: 1,
              core: TARGET_CORE,
              store: counter.url(`${PG}/${db}`),
              env: profileEnv(label),
              // redis-server shares its core with wrk and the upstream: on a loaded machine it can be
              // starved past the 200 ms default deadline, which would refuse requests, not cost CPU.
              serveArgs: shared
                ? [
                    "--redis-url",
                    redisUrl,
                    "--redis-prefix",
                    `bench${round}${name}`,
                    "--redis-timeout-ms",
                    "2000",
                  ]
                : [],
            }
          : { label, workers: 1, core: TARGET_CORE, env: profileEnv(label) },
      );
      owned.push(server.proc);
      const request = { url: server.base + CHAT_PATH, headers: server.headers, bodyFile };
      // Warmed up by requests, not time: a loaded machine serves fewer in the same seconds.
      let warmed = 0;
      for (let chunk = 0; chunk < 6 && warmed < WARMUP_REQUESTS; chunk++)
        warmed += (await wrk(request, { connections: C, seconds: WARMUP, rate: 0 })).requests;
      const upstreamAlone = await wrk(direct, { connections: 1, seconds: SECONDS, rate: 0 });
      const single = await wrk(request, { connections: 1, seconds: SECONDS, rate: 0 });
      const redisBefore = await redisCounters(redis);
      const tripsBefore = counter.trips;
      const loop = await measured(server.proc.pid, () =>
        wrk(request, { connections: C, seconds: SECONDS, rate: 0 }),
      );
      await Bun.sleep(200); // the last settlements reach PostgreSQL
      const redisAfter = await redisCounters(redis);
      const tripsAfter = counter.trips;
      // The same requests per second for every node: per-second costs and batch sizes are alike.
      const pacedTripsBefore = counter.trips;
      const paced =
        RATE > 0
          ? await measured(server.proc.pid, () =>
              wrk(request, { connections: connectionsFor(RATE), seconds: SECONDS, rate: RATE }),
            )
          : undefined;
      const redisPaced = await redisCounters(redis);
      const failed = [single, loop.run, ...(paced ? [paced.run] : [])].some((r) => r.errorCount > 0);
      if (failed) {
        throw new Error(
          `${label}: wrk saw errors ${JSON.stringify({ single: single.errors, loop: loop.run.errors, paced: paced?.run.errors })}; the node's log ends:\n${logTail(server.proc)}`,
        );
      }
      const sample: Sample = {
        addedP50Us: single.latency_us.p50 - upstreamAlone.latency_us.p50,
        rps: loop.run.rps,
        cpuUsPerRequest: loop.cpuUs,
        threads: loop.threads,
        ...(paced ? { pacedCpuUsPerRequest: paced.cpuUs, pacedThreads: paced.threads } : {}),
      };
      if (clustered) {
        sample.pgTripsPerRequest = (tripsAfter - tripsBefore) / loop.run.requests;
        if (paced) sample.pacedPgTripsPerRequest = (counter.trips - pacedTripsBefore) / paced.run.requests;
      }
      if (shared) {
        sample.redisTripsPerRequest = (redisAfter.trips - redisBefore.trips) / loop.run.requests;
        sample.redisCpuUsPerRequest = ((redisAfter.cpu - redisBefore.cpu) * 1e6) / loop.run.requests;
        if (paced)
          sample.pacedRedisTripsPerRequest = (redisPaced.trips - redisAfter.trips) / paced.run.requests;
      }
      samples[name].push(sample);
      say(`${label}: ${JSON.stringify(sample)}`);
      await server.proc.stop();
    }
    loads.push(loadAverage());
  }
  const median = (name: NodeName, pick: (s: Sample) => number | undefined) => {
    const picked = samples[name].map(pick).filter((x): x is number => x !== undefined);
    return picked.length === 0 ? null : Number(percentile(picked, 50).toFixed(2));
  };
  const figures = (name: NodeName) => ({
    added_p50_us: median(name, (s) => s.addedP50Us),
    closed_loop_rps: median(name, (s) => s.rps),
    cpu_us_per_request: median(name, (s) => s.cpuUsPerRequest),
    main_thread_us_per_request: median(name, (s) => s.threads.main),
    store_thread_us_per_request: median(name, (s) => s.threads.Worker),
    jit_thread_us_per_request: median(name, (s) => s.threads.JITWorker),
    paced_cpu_us_per_request: median(name, (s) => s.pacedCpuUsPerRequest),
    paced_main_thread_us_per_request: median(name, (s) => s.pacedThreads?.main),
    paced_store_thread_us_per_request: median(name, (s) => s.pacedThreads?.Worker),
    redis_round_trips_per_request: median(name, (s) => s.redisTripsPerRequest),
    redis_server_cpu_us_per_request: median(name, (s) => s.redisCpuUsPerRequest),
    pg_round_trips_per_request: median(name, (s) => s.pgTripsPerRequest),
    paced_redis_round_trips_per_request: median(name, (s) => s.pacedRedisTripsPerRequest),
    paced_pg_round_trips_per_request: median(name, (s) => s.pacedPgTripsPerRequest),
    rounds: samples[name],
  });
  console.log(
    JSON.stringify(
      {
        date: new Date().toISOString(),
        command: `bun bench/cluster-node.ts ${process.argv.slice(2).join(" ")}`.trim(),
        rounds: ROUNDS,
        seconds: SECONDS,
        connections: C,
        load_average: loads,
        // Each round's CPU per request ÷ the SQLite node's in that round (they ran back to back).
        ratio_by_round: Object.fromEntries(
          names
            .filter((name) => name !== "sqlite")
            .map((name) => [
              name,
              samples[name].map((s, i) => {
                const base = samples.sqlite[i];
                const ratio = (a?: number, b?: number) =>
                  a === undefined || b === undefined ? null : Number((a / b).toFixed(2));
                return {
                  closed_loop: ratio(s.cpuUsPerRequest, base?.cpuUsPerRequest),
                  paced: ratio(s.pacedCpuUsPerRequest, base?.pacedCpuUsPerRequest),
                };
              }),
            ]),
        ),
        sqlite: figures("sqlite"),
        ...(values["pg-memory"] ? { "pg-memory": figures("pg-memory") } : {}),
        "pg-redis": figures("pg-redis"),
        ...(values.before ? { "pg-redis-before": figures("pg-redis-before") } : {}),
      },
      null,
      2,
    ),
  );
} finally {
  for (const proc of owned.reverse()) await proc.stop().catch(() => undefined);
  counter?.stop();
  redis?.close();
  for (const db of made)
    await admin.unsafe(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`).catch(() => undefined);
  await admin.close();
  rmSync(dir, { recursive: true, force: true });
}
