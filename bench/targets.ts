// The targets measured side by side, each proxying the same fixed upstream: how to start each one
// (pinned to the target core, or to both cores for the several-processes comparison) and what a
// request to it looks like.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  BOTH_CORES,
  freePort,
  LOAD_CORE,
  type Proc,
  runBounded,
  spawnPinned,
  TARGET_CORE,
  waitReady,
} from "./procs.ts";

export type TargetName =
  | "direct"
  | "nginx"
  | "bun-proxy"
  | "modelgate"
  | "portkey"
  | "modelgate-1p"
  | "modelgate-2p";
export const TARGET_NAMES: readonly TargetName[] = [
  "direct",
  "nginx",
  "bun-proxy",
  "modelgate",
  "portkey",
  "modelgate-1p",
  "modelgate-2p",
];

/** modelgate with 1 and with 2 worker processes on one port, both allowed cores 0 and 1. */
export const SCALING_TARGETS: ReadonlyMap<TargetName, number> = new Map([
  ["modelgate-1p", 1],
  ["modelgate-2p", 2],
]);

export const MODEL = "modelx-5.5";
export const CHAT_PATH = "/v1/chat/completions";

export interface BenchContext {
  /** Private temp directory of this run. */
  dir: string;
  upstream: Proc;
  upstreamPort: number;
  /** The compiled modelgate executable. */
  modelgateBin: string;
  /** Folder with the peers' node_modules (bench/peers). */
  peersDir: string;
  /** Hard limit on open files: bounds how many streams a proxy can hold (two sockets each). */
  fileLimit: number;
}

export interface RunningTarget {
  name: TargetName;
  /** The process whose CPU and RSS are the target's (the upstream itself for direct). */
  proc: Proc;
  url: string;
  headers: Record<string, string>;
  /** Processes this target started (stopped at the end; empty for direct). */
  owned: Proc[];
}

/** The context of a bench that starts only modelgate servers (no peers) against `upstream`. */
export function modelgateContext(
  dir: string,
  upstream: { proc: Proc; port: number },
  modelgateBin = "",
): BenchContext {
  return {
    dir,
    upstream: upstream.proc,
    upstreamPort: upstream.port,
    modelgateBin,
    peersDir: "",
    fileLimit: 1024,
  };
}

/** The bench upstream (upstream.ts) as its own process on the load core. */
export async function startBenchUpstream(dir: string): Promise<{ proc: Proc; port: number }> {
  const port = freePort();
  const cmd = [process.execPath, join(import.meta.dir, "upstream.ts"), String(port)];
  const proc = spawnPinned({ name: "upstream", cmd, core: LOAD_CORE, dir });
  await waitReady(proc, async () => (await fetch(`http://127.0.0.1:${port}/stats`)).ok);
  return { proc, port };
}

/** Raised when a target cannot be measured for a reason that is not a failure of the run. */
export class Unavailable extends Error {
  override name = "Unavailable";
}

const http = async (url: string): Promise<boolean> => {
  const response = await fetch(url, { signal: AbortSignal.timeout(1000) });
  await response.arrayBuffer();
  return true;
};

/** Bun's fetch allows 256 requests in flight by default; the proxies need one per held stream. */
const BUN_ENV = { BUN_CONFIG_MAX_HTTP_REQUESTS: "65535" };

async function startNginx(ctx: BenchContext): Promise<RunningTarget> {
  const port = freePort();
  const dir = join(ctx.dir, "nginx");
  mkdirSync(join(dir, "tmp"), { recursive: true });
  const workerFiles = Math.max(1024, ctx.fileLimit - 100);
  const conf = `# nginx as a plain proxy_pass with upstream keep-alive (modelgate benchmark).
worker_processes 1;
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
worker_rlimit_nofile ${workerFiles};
events { worker_connections ${workerFiles}; }
http {
  access_log off;
  client_body_temp_path ${dir}/tmp/body;
  proxy_temp_path ${dir}/tmp/proxy;
  fastcgi_temp_path ${dir}/tmp/fastcgi;
  uwsgi_temp_path ${dir}/tmp/uwsgi;
  scgi_temp_path ${dir}/tmp/scgi;
  keepalive_requests 100000000;
  keepalive_timeout 300s;
  upstream bench_upstream {
    server 127.0.0.1:${ctx.upstreamPort};
    keepalive 512;
    keepalive_requests 100000000;
  }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://bench_upstream;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
      proxy_read_timeout 300s;
    }
  }
}
`;
  const confFile = join(dir, "nginx.conf");
  writeFileSync(confFile, conf);
  const cmd = ["nginx", "-p", `${dir}/`, "-e", join(dir, "error.log"), "-c", confFile];
  const proc = spawnPinned({ name: "nginx", cmd, core: TARGET_CORE, dir: ctx.dir });
  const base = `http://127.0.0.1:${port}`;
  await waitReady(proc, () => http(`${base}/stats`));
  return { name: "nginx", proc, url: base + CHAT_PATH, headers: {}, owned: [proc] };
}

/** The bare Bun proxy; `env` adds to its environment (bench/gc.ts: BUN_JSC_logGC). */
export async function startBunProxy(
  ctx: BenchContext,
  env: Record<string, string> = {},
): Promise<RunningTarget> {
  const port = freePort();
  const script = join(import.meta.dir, "bun-proxy.ts");
  const cmd = [process.execPath, script, String(port), `http://127.0.0.1:${ctx.upstreamPort}`];
  const proc = spawnPinned({
    name: "bun-proxy",
    cmd,
    core: TARGET_CORE,
    dir: ctx.dir,
    env: { ...BUN_ENV, ...env },
  });
  const base = `http://127.0.0.1:${port}`;
  await waitReady(proc, () => http(`${base}/stats`));
  return { name: "bun-proxy", proc, url: base + CHAT_PATH, headers: {}, owned: [proc] };
}

/** Runs the modelgate CLI `bin` and returns its stdout; a failure throws with its stderr. */
export async function modelgateCli(bin: string, args: string[]): Promise<string> {
  const out = await runBounded([bin, ...args], 60_000);
  if (out.code !== 0) throw new Error(`modelgate ${args.join(" ")} failed (exit ${out.code}): ${out.stderr}`);
  return out.stdout.trim();
}

/**
 * The bench account, group and key in the store `configFile` names; returns the key. Limits on:
 * every request is counted against an RPM window and takes a concurrency slot.
 */
export async function provisionBenchKey(bin: string, configFile: string): Promise<string> {
  const config = ["--config", configFile];
  // The store commands refuse a SQLite file that does not exist (only serve creates one), and the
  // key is made before serve starts: an empty file is a database they migrate.
  const sqlite = /^url = "sqlite:\/\/(.+)"$/m.exec(readFileSync(configFile, "utf8"))?.[1];
  if (sqlite !== undefined && !existsSync(sqlite)) writeFileSync(sqlite, "");
  await modelgateCli(bin, ["accounts", "create", "bench", "--balance", "1000000", ...config]);
  await modelgateCli(bin, ["groups", "set", "bench", "--models", MODEL, ...config]);
  const limits = ["--rpm", "1000000000", "--concurrency", "100000"];
  const key = await modelgateCli(bin, [
    "keys",
    "create",
    "--account",
    "bench",
    "--group",
    "bench",
    ...limits,
    ...config,
  ]);
  if (!/^sk-/.test(key)) throw new Error(`modelgate keys create printed no key: ${key}`);
  return key;
}

/** The channel kinds modelgate speaks to upstreams; the bench upstream answers each. */
export type ChannelKind = "openai-chat" | "openai-responses" | "anthropic";

export interface ModelgateVariant {
  /** Names its folder and process log. */
  label: string;
  /** server.workers: above 1, a primary and that many worker processes share the port. */
  workers: number;
  core: number | string;
  /** The one channel's protocol (default openai-chat). */
  kind?: ChannelKind;
  /** store.url (default: a SQLite file in its folder). */
  store?: string;
  /** More `serve` flags (a cluster node's --redis-url, --redis-prefix). */
  serveArgs?: string[];
  /** More environment for `serve` (bench/gc.ts: BUN_JSC_logGC). */
  env?: Record<string, string>;
  /** More configuration appended to the file (bench/cache.ts: a `[cache.groups.bench]` policy). */
  extraConfig?: string;
  /**
   * A build from before `server.access_log` existed (e4f527c, the commit before wave two: it had no
   * access log and refuses the setting), measured beside today's by bench/cpu-ab.ts.
   */
  beforeAccessLog?: boolean;
}

export interface ModelgateServer {
  proc: Proc;
  /** http://127.0.0.1:PORT */
  base: string;
  /** The bench key's Authorization header. */
  headers: Record<string, string>;
}

/** The channel's base_url: Anthropic channels add /v1/messages themselves, OpenAI ones a path under /v1. */
function channelBase(ctx: BenchContext, kind: ChannelKind): string {
  const root = `http://127.0.0.1:${ctx.upstreamPort}`;
  return kind === "anthropic" ? root : `${root}/v1`;
}

/** modelgate with its full pipeline and one channel of `kind` to the bench upstream, key made by the CLI. */
export async function startModelgateServer(
  ctx: BenchContext,
  variant: ModelgateVariant,
): Promise<ModelgateServer> {
  const port = freePort();
  const kind = variant.kind ?? "openai-chat";
  const dir = join(ctx.dir, variant.label);
  mkdirSync(dir, { recursive: true });
  const configFile = join(dir, "modelgate.toml");
  writeFileSync(
    configFile,
    `# modelgate with its full pipeline, one ${kind} channel to the bench upstream.
[server]
listen = "127.0.0.1:${port}"
workers = ${variant.workers}
${variant.beforeAccessLog ? "" : "# Like nginx's `access_log off` above: no line per request.\naccess_log = false"}

[store]
url = "${variant.store ?? `sqlite://${join(dir, "modelgate.db")}`}"

[bootstrap]
enabled = false

[[channels]]
kind = "${kind}"
name = "bench-upstream"
base_url = "${channelBase(ctx, kind)}"
models = ["${MODEL}"]
${variant.extraConfig ?? ""}`,
  );
  const config = ["--config", configFile];
  const key = await provisionBenchKey(ctx.modelgateBin, configFile);
  const cmd = [ctx.modelgateBin, "serve", ...config, ...(variant.serveArgs ?? [])];
  const env = { ...BUN_ENV, ...variant.env };
  const proc = spawnPinned({ name: variant.label, cmd, core: variant.core, dir, env });
  const base = `http://127.0.0.1:${port}`;
  // Logged once every worker listens (a single process logs it when it listens).
  const listening = () => readFileSync(proc.logFile, "utf8").includes('"msg":"modelgate listening"');
  await waitReady(proc, async () => listening() && http(`${base}/healthz`));
  return { proc, base, headers: { Authorization: `Bearer ${key}` } };
}

async function startModelgate(
  ctx: BenchContext,
  name: TargetName,
  workers: number,
  core: number | string,
): Promise<RunningTarget> {
  const server = await startModelgateServer(ctx, { label: name, workers, core });
  return {
    name,
    proc: server.proc,
    url: server.base + CHAT_PATH,
    headers: server.headers,
    owned: [server.proc],
  };
}

async function startPortkey(ctx: BenchContext): Promise<RunningTarget> {
  const script = join(ctx.peersDir, "node_modules/@portkey-ai/gateway/build/start-server.js");
  if (!(await Bun.file(script).exists())) {
    throw new Unavailable(`Portkey is not installed (${script}); run: npm install --prefix bench/peers`);
  }
  const port = freePort();
  const cmd = ["node", script, `--port=${port}`, "--headless"];
  const proc = spawnPinned({
    name: "portkey",
    cmd,
    core: TARGET_CORE,
    dir: ctx.dir,
    env: { NODE_ENV: "production" },
  });
  const base = `http://127.0.0.1:${port}`;
  await waitReady(proc, () => http(`${base}/`));
  const headers = {
    Authorization: "Bearer sk-bench-upstream",
    "x-portkey-provider": "openai",
    "x-portkey-custom-host": `http://127.0.0.1:${ctx.upstreamPort}/v1`,
  };
  return { name: "portkey", proc, url: base + CHAT_PATH, headers, owned: [proc] };
}

/** Starts one target (for direct: nothing, the upstream itself is measured). */
export async function startTarget(name: TargetName, ctx: BenchContext): Promise<RunningTarget> {
  switch (name) {
    case "direct":
      return {
        name,
        proc: ctx.upstream,
        url: `http://127.0.0.1:${ctx.upstreamPort}${CHAT_PATH}`,
        headers: {},
        owned: [],
      };
    case "nginx":
      return startNginx(ctx);
    case "bun-proxy":
      return startBunProxy(ctx);
    case "modelgate":
      return startModelgate(ctx, name, 1, TARGET_CORE);
    case "modelgate-1p":
    case "modelgate-2p":
      return startModelgate(ctx, name, SCALING_TARGETS.get(name) ?? 1, BOTH_CORES);
    case "portkey":
      return startPortkey(ctx);
    default: {
      const never: never = name;
      throw new Error(`unknown target ${String(never)}`);
    }
  }
}
