// Turns one run's results into the Markdown table (absolute figures, ratios computed within the
// run, modelgate against the issue's targets, every client path native and translated), the field's
// figures (field-report.ts) and the LiteLLM figures quoted beside them.
import type { FieldFigures } from "./field.ts";
import { renderField } from "./field-report.ts";
import type { TargetFigures } from "./measure.ts";
import { overNative, type PathResult, type PathsReport } from "./paths.ts";
import type { Plan } from "./plan.ts";
import type { ScalingFigures } from "./scaling.ts";
import type { SoakFigures } from "./soak.ts";
import { ratio } from "./stats.ts";
import type { TargetName } from "./targets.ts";

export interface TargetResult {
  name: TargetName;
  /** "ok", "endpoint not available", or what went wrong. */
  status: string;
  streamEvents?: number;
  figures?: TargetFigures;
  /** modelgate-1p / modelgate-2p: the several-processes comparison (scaling.ts). */
  scaling?: ScalingFigures;
  soak?: SoakFigures | undefined;
  /** RSS over a short window after start, before the first proxied request (memory section). */
  idleRssBeforeFirstRequest?: number;
  /** The field's figures (field.ts), by section. */
  field?: FieldFigures;
}

export interface RunInfo {
  date: string;
  command: string;
  machine: string;
  versions: Record<string, string>;
  coreSplit: string;
  plan: Plan;
  loadAverage: string;
  wallSeconds: number;
  upstreamCapacity: string;
}

const LITELLM = `LiteLLM's published figures (not measured here; quoted from its documentation, docs.litellm.ai,
pages "LiteLLM Proxy Performance" and "Benchmarks", as found through the search tool):
- "LiteLLM proxy adds 0.00325 seconds latency as compared to using the Raw OpenAI API" (3.25 ms added).
- Against a fake OpenAI endpoint, 2 instances of 4 CPUs / 8 GB: LiteLLM overhead median 12 ms, p95 29 ms,
  p99 43 ms at 1,035.7 requests/s; 4 instances: median 2 ms, p95 8 ms, p99 13 ms at 1,170 requests/s.`;

const ms = (us: number | undefined) => (us === undefined ? "–" : (us / 1000).toFixed(3));
const fixed = (n: number | null | undefined, digits = 2) =>
  n === null || n === undefined ? "–" : n.toFixed(digits);
const mb = (bytes: number | undefined) => (bytes === undefined ? "–" : (bytes / 2 ** 20).toFixed(1));
const kb = (bytes: number | undefined) => (bytes === undefined ? "–" : (bytes / 1024).toFixed(1));
const int = (n: number | undefined) => (n === undefined ? "–" : Math.round(n).toLocaleString("en-US"));

/** The frontier, or "< lowest rate tried" when no rate kept p99 under 5 ms. */
function frontierCell(f: TargetFigures | undefined): string {
  if (!f) return "–";
  if (f.frontier.rate > 0) return int(f.frontier.rate);
  const lowest = Math.min(...f.frontier.steps.map((s) => s.rate));
  return Number.isFinite(lowest) ? `< ${int(lowest)}` : "–";
}

interface Derived {
  addedP50Us?: number;
  addedP99Us?: number;
  addedTtfbMs?: number;
  addedGapP99Ms?: number;
}

function derive(result: TargetResult, direct: TargetFigures | undefined): Derived {
  const f = result.figures;
  if (!f || !direct) return {};
  return {
    addedP50Us: f.latency.p50Us - direct.latency.p50Us,
    addedP99Us: f.latency.p99Us - direct.latency.p99Us,
    addedTtfbMs: f.stream.ttfbMs.p50 - direct.stream.ttfbMs.p50,
    addedGapP99Ms: f.stream.gapMs.p99 - direct.stream.gapMs.p99,
  };
}

const isScaling = (r: TargetResult) => r.name === "modelgate-1p" || r.name === "modelgate-2p";

function figuresTable(results: TargetResult[], direct: TargetFigures | undefined): string[] {
  const head = [
    "| target | status | added p50 ms (c=1) | added p99 ms (c=1) | req/s closed (c=32) | frontier req/s (p99 < 5 ms) | CPU µs/req | added TTFB p50 ms | added gap p99 ms | streams held | KB RSS/stream | upstream streams left open | idle RSS MB | RSS under load MB | soak growth MB |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
  ];
  const rows = results
    .filter((r) => !isScaling(r))
    .map((r) => {
      const f = r.figures;
      const d = derive(r, direct);
      const status = r.status.replace(/\s+/g, " ").replaceAll("|", "\\|").slice(0, 160);
      return `| ${r.name} | ${status} | ${ms(d.addedP50Us)} | ${ms(d.addedP99Us)} | ${int(f?.closed.rps)} | ${frontierCell(f)} | ${fixed(f?.closed.cpuUsPerRequest, 1)} | ${fixed(d.addedTtfbMs, 3)} | ${fixed(d.addedGapP99Ms, 3)} | ${int(f?.held.held)} | ${kb(f?.held.rssPerStreamBytes)} | ${int(f?.upstreamStreamsLeftOpen)} | ${mb(f?.idleRssBytes)} | ${mb(f?.loadRssBytes)} | ${mb(r.soak?.growthBytes)} |`;
    });
  return [...head, ...rows];
}

function ratiosTable(results: TargetResult[]): string[] {
  const by = (name: TargetName) => results.find((r) => r.name === name)?.figures;
  const [direct, nginx, bun] = [by("direct"), by("nginx"), by("bun-proxy")];
  const added = (f: TargetFigures | undefined, key: "p50Us" | "p99Us") =>
    f && direct ? f.latency[key] - direct.latency[key] : undefined;
  const head = [
    "| target | added p50 ÷ nginx | added p99 ÷ nginx | added p50 ÷ bun-proxy | frontier ÷ nginx | frontier ÷ direct | frontier ÷ bun-proxy | CPU/req ÷ nginx | CPU/req ÷ bun-proxy | p50 ÷ direct (c=1) |",
    "|---|---|---|---|---|---|---|---|---|---|",
  ];
  const rows = results
    .filter((r) => r.figures)
    .map((r) => {
      const f = r.figures;
      const cells = [
        ratio(added(f, "p50Us"), added(nginx, "p50Us")),
        ratio(added(f, "p99Us"), added(nginx, "p99Us")),
        ratio(added(f, "p50Us"), added(bun, "p50Us")),
        ratio(f?.frontier.rate, nginx?.frontier.rate),
        ratio(f?.frontier.rate, direct?.frontier.rate),
        ratio(f?.frontier.rate, bun?.frontier.rate),
        ratio(f?.closed.cpuUsPerRequest, nginx?.closed.cpuUsPerRequest),
        ratio(f?.closed.cpuUsPerRequest, bun?.closed.cpuUsPerRequest),
        ratio(f?.latency.p50Us, direct?.latency.p50Us),
      ];
      return `| ${r.name} | ${cells.map((c) => fixed(c)).join(" | ")} |`;
    });
  return [...head, ...rows];
}

/** modelgate with 1 and 2 worker processes on one port, both allowed cores 0 and 1; ratios 2p ÷ 1p. */
function scalingSection(results: TargetResult[], direct: TargetFigures | undefined): string[] {
  const rows = results.filter(isScaling);
  if (rows.length === 0) return [];
  const added = (s: ScalingFigures | undefined, key: "p50Us" | "p99Us") =>
    s && direct ? s.latency[key] - direct.latency[key] : undefined;
  const lines = [
    "Several processes on one port (`server.workers`; every admission and settlement decided by the primary). Both targets may use cores 0 and 1 (taskset), sharing core 0 with the load generator and the upstream; the `modelgate` row above is the same configuration alone on core 1. CPU is every process of the target (primary and workers) from /proc; the primary's share is the admission, settlement, usage writes and IPC it does for the workers; machine busy is the share of both cores in use during the closed loop (target, load generator and upstream together).",
    "",
    "| target | status | processes | added p50 ms (c=1) | added p99 ms (c=1) | req/s closed (c=32) | CPU µs/req, all processes | of which primary | machine busy (closed loop) | frontier req/s (p99 < 5 ms) |",
    "|---|---|---|---|---|---|---|---|---|---|",
    ...rows.map((r) => {
      const f = r.scaling;
      const status = r.status.replace(/\s+/g, " ").replaceAll("|", "\\|").slice(0, 160);
      const primary = f?.closed.primaryCpuUsPerRequest;
      return `| ${r.name} | ${status} | ${int(f?.processes)} | ${ms(added(f, "p50Us"))} | ${ms(added(f, "p99Us"))} | ${int(f?.closed.rps)} | ${fixed(f?.closed.cpuUsPerRequest, 1)} | ${primary === null ? "–" : fixed(primary, 1)} | ${f ? `${Math.round(f.closed.machineBusy * 100)} %` : "–"} | ${int(f?.frontier.rate)} |`;
    }),
  ];
  const one = results.find((r) => r.name === "modelgate-1p")?.scaling;
  const two = results.find((r) => r.name === "modelgate-2p")?.scaling;
  if (!one || !two) return [...lines, ""];
  const cells = [
    ratio(two.closed.rps, one.closed.rps),
    ratio(two.closed.cpuUsPerRequest, one.closed.cpuUsPerRequest),
    ratio(two.frontier.rate, one.frontier.rate),
    ratio(added(two, "p50Us"), added(one, "p50Us")),
  ];
  return [
    ...lines,
    "",
    "| 2p ÷ 1p | req/s closed | CPU/req | frontier | added p50 (c=1) |",
    "|---|---|---|---|---|",
    `| modelgate-2p ÷ modelgate-1p | ${cells.map((c) => fixed(c)).join(" | ")} |`,
    "",
  ];
}

/** Every client path: added latency and TTFB against the upstream alone, CPU, translated ÷ native. */
function pathsSection(report: PathsReport | undefined, plan: Plan): string[] {
  if (!report || report.paths.length === 0) return [];
  const added = (p: PathResult, pick: (t: { c1: { p50Us: number; p99Us: number } }) => number) => {
    const direct = report.direct[p.upstream];
    return p.figures && direct ? pick(p.figures) - pick(direct) : undefined;
  };
  const ttfb = (p: PathResult) => {
    const direct = report.direct[p.upstream];
    return p.figures && direct ? p.figures.stream.ttfbP50Ms - direct.stream.ttfbP50Ms : undefined;
  };
  const row = (name: string, route: string, p: PathResult, ratios: boolean) => {
    const f = p.figures;
    const status = p.status.replace(/\s+/g, " ").replaceAll("|", "\\|").slice(0, 160);
    const over = (pick: (x: NonNullable<PathResult["figures"]>) => number) =>
      ratios ? fixed(overNative(report, p, pick)) : "–";
    const cells = [
      name,
      route,
      status,
      ms(added(p, (t) => t.c1.p50Us)),
      ms(added(p, (t) => t.c1.p99Us)),
      int(f?.closed.rps),
      fixed(f?.closed.cpuUsPerRequest, 1),
      fixed(f?.streamCpuUsPerEvent, 2),
      fixed(ttfb(p), 3),
      over((x) => x.closed.cpuUsPerRequest),
      over((x) => x.streamCpuUsPerEvent),
    ];
    return `| ${cells.join(" | ")} |`;
  };
  const rows = report.paths.map((p) => row(p.name, `${p.client} → ${p.upstream}`, p, true));
  if (report.floor) {
    const proxy: PathResult = {
      name: "chat",
      client: "chat",
      upstream: "chat",
      native: "chat",
      ...report.floor,
    };
    rows.push(row("bun-proxy (floor)", "chat → chat, plain Bun proxy", proxy, false));
  }
  return [
    `Every client path, one modelgate per channel kind alone on the target core (phases: warm-up 1 s, concurrency 1 for ${plan.pathSeconds} s, closed loop at ${plan.closedConnections} connections for ${plan.pathSeconds} s, ${plan.pathStreams} streams of 64 events ${plan.streamParallel} at a time; ${plan.pathRounds} round(s) over every path in turn, medians). Added figures subtract the upstream alone on the path the channel calls, measured in this run; CPU is every thread's run time (/proc/PID/task/*/schedstat); stream CPU per event is the target's CPU over the stream phase divided by the upstream events relayed (each stream's request work included); ratios are over the native path of the same client protocol. The last row is the bare Bun proxy (bench/bun-proxy.ts) on the Chat path in the same rounds: the runtime's own cost per request and per streamed event.`,
    "",
    "| path | client → upstream | status | added p50 ms (c=1) | added p99 ms (c=1) | req/s closed (c=32) | CPU µs/req | stream CPU µs/event | added TTFB p50 ms | CPU/req ÷ native | CPU/event ÷ native |",
    "|---|---|---|---|---|---|---|---|---|---|---|",
    ...rows,
    "",
  ];
}

export function renderMarkdown(info: RunInfo, results: TargetResult[], paths?: PathsReport): string {
  const direct = results.find((r) => r.name === "direct")?.figures;
  const p = info.plan;
  return [
    `# modelgate benchmark (${p.mode}${p.small && p.mode === "full" ? ", small sizes" : ""})`,
    "",
    `- Date: ${info.date}`,
    `- Command: \`${info.command}\``,
    `- Machine: ${info.machine}`,
    `- Versions: ${Object.entries(info.versions)
      .map(([k, v]) => `${k} ${v}`)
      .join("; ")}`,
    `- Core split: ${info.coreSplit}`,
    `- Load average: ${info.loadAverage}`,
    `- Wall time of the run: ${info.wallSeconds} s`,
    `- Upstream: ${info.upstreamCapacity}`,
    ...(p.sections.includes("classic")
      ? [
          `- Phases per target: warm-up ${p.warmupSeconds} s; concurrency 1 for ${p.latencySeconds} s; closed loop at ${p.closedConnections} connections for ${p.closedSeconds} s (CPU time of the proxy's processes from /proc/<pid>/stat, utime + stime, over this run); fixed-rate frontier by binary search, ${p.frontierSteps} steps of ${p.frontierSeconds} s (a rate counts when p99 < 5 ms, no errors, ≥ 95 % of the rate achieved); ${p.streamCount} streams of 64 events 20 ms apart, ${p.streamParallel} at a time; concurrent streams held in steps ${p.holdSteps.join(", ")}; soak of all targets at once for ${p.soakSeconds} s at ${p.soakRate} req/s plus ${p.soakStreams} streams each (growth = RSS at the end minus RSS after the first fifth).`,
        ]
      : []),
    "",
    ...(p.sections.includes("classic")
      ? [
          "Added figures are the target minus direct, measured in this run.",
          "",
          ...figuresTable(results, direct),
          "",
          "Ratios, computed within this run:",
          "",
          ...ratiosTable(results),
          "",
          ...scalingSection(results, direct),
        ]
      : []),
    ...renderField(results, p),
    ...pathsSection(paths, p),
    LITELLM,
    "",
  ].join("\n");
}
