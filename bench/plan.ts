// How long and how hard each phase runs: the full run, the smoke mode, the sections chosen, and the
// small sizes (`--small`) that check every measurement works in seconds.
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { wholeOption } from "./options.ts";
import { PATH_NAMES, type PathName } from "./paths.ts";
import { TARGET_NAMES, type TargetName } from "./targets.ts";

/** The measurement sections: the bench's own per-target figures, and the field's (field.ts). */
export type Section = "classic" | "latency" | "sweep" | "sustained" | "frames" | "stalls" | "memory";
export const SECTION_NAMES: readonly Section[] = [
  "classic",
  "latency",
  "sweep",
  "sustained",
  "frames",
  "stalls",
  "memory",
];

/** Sizes of the field's sections (field.ts). */
export interface FieldPlan {
  /** Concurrency 1 phase, seconds (after a 1 s warm-up). */
  latencySeconds: number;
  /** The concurrency sweep's rungs, and each rung's length in seconds. */
  sweepLevels: number[];
  sweepSeconds: number;
  /** The sustained sweep against the 20 ms upstream. */
  sustainedLevels: number[];
  sustainedSeconds: number;
  /** Streams timed one at a time for time to first frame and inter-frame gaps. */
  frameStreams: number;
  /** Concurrent-stream steps for the most streams without a stall. */
  stallSteps: number[];
  /** Idle window before the first request (RSS sampled every 100 ms, median). */
  idleMs: number;
  /** The fixed load of the memory phase, its length, and the quiet window after it. */
  memoryRate: number;
  memorySeconds: number;
  recoverSeconds: number;
}

export interface Plan {
  mode: "full" | "smoke";
  /** Sections measured per target (every one by default). */
  sections: Section[];
  /** `--small`: every phase at a size that only checks it works; figures are not meaningful. */
  small: boolean;
  field: FieldPlan;
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
                       [--paths a,b,...|none] [--path-rounds N] [--sections a,b,...] [--small]
                       [--sweep c,c,...] [--sustained c,c,...] [--stall-steps n,n,...]
                       [--bin PATH] [--out DIR]
  --smoke          every target started and answering once (a few seconds), no figures
  --sections       subset of ${SECTION_NAMES.join(",")} (default all); classic is the
                   bench's own table (with the soak), the others the field's method
  --small          every phase at a size that checks it works (seconds, not figures)
  --sweep          the concurrency sweep's rungs (default 1,2,4,...,256)
  --sustained      the 20 ms upstream sweep's rungs (default 8,32,128,512,1024)
  --stall-steps    concurrent streams per step (default 100,250,500,1000,2000,4000)
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
      sections: { type: "string" },
      small: { type: "boolean" },
      sweep: { type: "string" },
      sustained: { type: "string" },
      "stall-steps": { type: "string" },
      bin: { type: "string" },
      out: { type: "string" },
    },
    strict: true,
  });
  const number = wholeOption;
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
  const sections = (values.sections?.split(",") ?? [...SECTION_NAMES]).map((s) => s.trim());
  for (const s of sections) {
    if (!SECTION_NAMES.includes(s as Section))
      throw new Error(`--sections: unknown section "${s}"; known: ${SECTION_NAMES.join(", ")}`);
  }
  const list = (name: string, text: string | undefined, fallback: number[]): number[] =>
    text === undefined ? fallback : text.split(",").map((n) => number(name, n.trim(), 0));
  const small = values.small === true;
  const maxStreams = streamCap(fileLimit, number("max-streams", values["max-streams"], small ? 50 : 10_000));
  // Each sustained connection is a socket at wrk, two at a proxy; each stall stream the same.
  const capped = (steps: number[]) => steps.filter((n) => n <= streamCap(fileLimit, n));
  const field: FieldPlan = {
    latencySeconds: small ? 1 : 10,
    sweepLevels: list("sweep", values.sweep, small ? [1, 4, 16] : [1, 2, 4, 8, 16, 32, 64, 128, 256]),
    sweepSeconds: small ? 1 : 3,
    sustainedLevels: capped(list("sustained", values.sustained, small ? [8, 64] : [8, 32, 128, 512, 1024])),
    sustainedSeconds: small ? 1 : 3,
    frameStreams: small ? 3 : 16,
    stallSteps: capped(
      list("stall-steps", values["stall-steps"], small ? [10, 50] : [100, 250, 500, 1000, 2000, 4000]),
    ),
    idleMs: small ? 500 : 2000,
    memoryRate: small ? 100 : 250,
    memorySeconds: small ? 2 : 10,
    recoverSeconds: small ? 1 : 10,
  };
  const plan: Plan = {
    mode: values.smoke ? "smoke" : "full",
    sections: sections as Section[],
    small,
    field,
    targets: targets as TargetName[],
    warmupSeconds: small ? 1 : 2,
    latencySeconds: small ? 1 : 6,
    closedSeconds: small ? 1 : 6,
    closedConnections: 32,
    frontierSteps: small ? 2 : 6,
    frontierSeconds: small ? 1 : 3,
    streamCount: small ? 4 : 48,
    streamParallel: small ? 2 : 8,
    holdSteps: holdSteps(maxStreams),
    holdMs: 45_000,
    drainMs: small ? 2000 : 5000,
    soakSeconds: number("soak-seconds", values["soak-seconds"], small ? 10 : 300),
    soakRate: 250,
    soakStreams: small ? 2 : 4,
    paths: paths as PathName[],
    pathSeconds: small ? 1 : 3,
    pathStreams: small ? 4 : 24,
    pathRounds: number("path-rounds", values["path-rounds"], 1),
  };
  // The executable runs from each target's own folder: a relative path must not depend on it.
  return { plan, bin: values.bin === undefined ? undefined : resolve(values.bin), out: values.out };
}
