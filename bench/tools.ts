// Makes sure the tools the benchmark needs are here: Debian's nginx and wrk (installed with
// apt-get when missing and we are root), taskset, node, and the peers in bench/peers (npm ci).
// Every install step is bounded in time; a tool that cannot be had is an error naming the fix.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { runBounded } from "./procs.ts";

export const PEERS_DIR = join(import.meta.dir, "peers");

function onPath(tool: string): boolean {
  return Bun.which(tool) !== null || existsSync(`/usr/sbin/${tool}`);
}

async function aptInstall(packages: string[], say: (line: string) => void): Promise<void> {
  const isRoot = process.getuid?.() === 0;
  if (!isRoot || !onPath("apt-get")) {
    throw new Error(
      `missing ${packages.join(", ")}: install them with \`apt-get install ${packages.join(" ")}\` (needs root)`,
    );
  }
  const env = { DEBIAN_FRONTEND: "noninteractive" };
  say(`installing ${packages.join(", ")} with apt-get (bounded to 8 minutes)`);
  const update = await runBounded(["apt-get", "update", "-qq"], 180_000, env);
  if (update.code !== 0)
    throw new Error(`apt-get update failed (exit ${update.code}): ${update.stderr.slice(-800)}`);
  const install = await runBounded(
    ["apt-get", "install", "-y", "-qq", "--no-install-recommends", ...packages],
    300_000,
    env,
  );
  if (install.code !== 0) {
    throw new Error(
      `apt-get install ${packages.join(" ")} failed (exit ${install.code}): ${install.stderr.slice(-800)}`,
    );
  }
}

async function ensurePeers(say: (line: string) => void): Promise<void> {
  if (existsSync(join(PEERS_DIR, "node_modules/@portkey-ai/gateway/build/start-server.js"))) return;
  say("installing the peers (Portkey gateway) into bench/peers with npm ci");
  const out = await runBounded(
    ["npm", "ci", "--prefix", PEERS_DIR, "--no-audit", "--no-fund", "--loglevel=error"],
    300_000,
  );
  if (out.code !== 0)
    throw new Error(`npm ci in bench/peers failed (exit ${out.code}): ${out.stderr.slice(-800)}`);
}

const SYSTEM_TOOLS = [
  ["nginx", "nginx"],
  ["wrk", "wrk"],
  ["taskset", "util-linux"],
] as const;

/**
 * What the benchmark would have to install before it can run (system tools, node, the peers),
 * without installing anything: the test suite runs the bench smoke only when this is empty.
 */
export function missingTools(): string[] {
  const missing: string[] = SYSTEM_TOOLS.filter(([tool]) => !onPath(tool)).map(([tool]) => tool);
  for (const tool of ["node", "npm"]) if (!onPath(tool)) missing.push(tool);
  if (!existsSync(join(PEERS_DIR, "node_modules/@portkey-ai/gateway/build/start-server.js")))
    missing.push("bench/peers (Portkey)");
  return missing;
}

/** Checks for every tool, installing what is missing; throws with the fix when it cannot. */
export async function ensureTools(say: (line: string) => void): Promise<void> {
  const missing = SYSTEM_TOOLS.filter(([tool]) => !onPath(tool));
  if (missing.length > 0)
    await aptInstall(
      missing.map(([, pkg]) => pkg),
      say,
    );
  for (const tool of ["nginx", "wrk", "taskset"]) {
    if (!onPath(tool)) throw new Error(`${tool} is still missing after installing; install it by hand`);
  }
  if (!onPath("node")) throw new Error("node is missing: Portkey's gateway runs on Node.js; install nodejs");
  if (!onPath("npm")) throw new Error("npm is missing: it installs the peers into bench/peers; install npm");
  await ensurePeers(say);
}

/** The limit on open files that children inherit (the soft one; nginx raises its own). */
export async function fileLimit(): Promise<number> {
  const out = await runBounded(["sh", "-c", "ulimit -Sn"], 5000);
  const text = out.stdout.trim();
  if (text === "unlimited") return 1_000_000;
  const n = Number(text);
  return Number.isFinite(n) && n > 0 ? n : 1024;
}
