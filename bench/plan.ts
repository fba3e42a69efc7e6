// How long and how hard each phase runs: the full run (under 15 minutes) and the smoke mode.
import { parseArgs } from "node:util";
import { PATH_NAMES, type PathName } from "./paths.ts";
import { TARGET_NAMES, type TargetName } from "./targets.ts";

export interface Plan {
  mode: "full" | "smoke";
  targets: TargetName[];
  warmupSeconds: number;
  latencySeconds: number;
  closedSeconds: number;
  closedConnections: number;
  frontierSteps: number;
  frontierSeconds: number;
  streamCount: number;
  streamParallel: number;
  /** Concurrent-stream steps; the last is the most streams tried. */
  holdSteps: number[];
  /** How long the upstream holds a held stream open (it ends earlier when the client leaves). */
  holdMs: number;
  /** How long a target gets to cancel upstream streams after their clients leave. */
  drainMs: number;
  soakSeconds: number;
  /** Requests per second per target during the soak (all targets at once). */
  soakRate: number;
  /** Streams kept running per target during the soak. */
  soakStreams: number;
  /** Client paths measured on their own modelgate per channel kind (paths.ts). */
  paths: PathName[];
  /** Length of each path phase (concurrency 1, closed loop), seconds. */
  pathSeconds: number;
  /** Streams per path (streamParallel at a time). */
  pathStreams: number;
  /** Rounds over every path (medians reported). */
  pathRounds: number;
}

export const USAGE = `usage: bun bench/run.ts [--smoke] [--soak-seconds N] [--max-streams N] [--targets a,b,...]
                       [--paths a,b,...|none] [--path-rounds N]
                       [--bin PATH] [--out DIR]
  --smoke          every target started and answering once (a few seconds), no figures
  --soak-seconds   soak length (default 300)
  --max-streams    most concurrent streams tried per target (default 10000, capped by the open-file limit)
  --targets        subset of ${TARGET_NAMES.join(",")}
  --paths          client paths through modelgate, native and translated: subset of
                   ${PATH_NAMES.join(",")}, or none
                   (default: all, unless --targets is given)
  --path-rounds    rounds over every path, medians reported (default 1)
  --bin            use this modelgate executable instead of building one
  --out            results folder (default bench/results)`;

export interface Options {
  plan: Plan;
  bin: string | undefined;
  out: string | undefined;
}

function holdSteps(max: number): number[] {
  const steps = [1000, 2500, 5000].filter((n) => n < max);
  return [...steps, max];
}

/** Streams a proxy can hold: two sockets each (client and upstream) within the open-file limit. */
export function streamCap(fileLimit: number, wanted: number): number {
  return Math.max(1, Math.min(wanted, Math.floor((fileLimit - 400) / 2)));
}

export function parseOptions(argv: string[], fileLimit: number): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      smoke: { type: "boolean" },
      "soak-seconds": { type: "string" },
      "max-streams": { type: "string" },
      targets: { type: "string" },
      paths: { type: "string" },
      "path-rounds": { type: "string" },
      bin: { type: "string" },
      out: { type: "string" },
    },
    strict: true,
  });
  const number = (name: string, text: string | undefined, fallback: number): number => {
    if (text === undefined) return fallback;
    const n = Number(text);
    if (!Number.isInteger(n) || n < 1)
      throw new Error(`--${name}: expected a whole number of at least 1, got "${text}"`);
    return n;
  };
  const targets = (values.targets?.split(",") ?? [...TARGET_NAMES]).map((t) => t.trim());
  for (const t of targets) {
    if (!TARGET_NAMES.includes(t as TargetName))
      throw new Error(`--targets: unknown target "${t}"; known: ${TARGET_NAMES.join(", ")}`);
  }
  if (!targets.includes("direct")) targets.unshift("direct");
  const pathList = values.paths ?? (values.targets === undefined ? PATH_NAMES.join(",") : "none");
  const paths = pathList === "none" ? [] : pathList.split(",").map((p) => p.trim());
  for (const p of paths) {
    if (!PATH_NAMES.includes(p as PathName))
      throw new Error(`--paths: unknown path "${p}"; known: ${PATH_NAMES.join(", ")}, or none`);
  }
  const maxStreams = streamCap(fileLimit, number("max-streams", values["max-streams"], 10_000));
  const plan: Plan = {
    mode: values.smoke ? "smoke" : "full",
    targets: targets as TargetName[],
    warmupSeconds: 2,
    latencySeconds: 6,
    closedSeconds: 6,
    closedConnections: 32,
    frontierSteps: 6,
    frontierSeconds: 3,
    streamCount: 48,
    streamParallel: 8,
    holdSteps: holdSteps(maxStreams),
    holdMs: 45_000,
    drainMs: 5000,
    soakSeconds: number("soak-seconds", values["soak-seconds"], 300),
    soakRate: 250,
    soakStreams: 4,
    paths: paths as PathName[],
    pathSeconds: 3,
    pathStreams: 24,
    pathRounds: number("path-rounds", values["path-rounds"], 1),
  };
  return { plan, bin: values.bin, out: values.out };
}
