// The field's figures in the run's Markdown: one row per target (added latency at concurrency 1,
// the frontier at each p99 bound, sustained req/s behind the 20 ms upstream, added frame timing,
// streams without a stall, memory), modelgate against nginx, the bare Bun proxy and Portkey as
// ratios within the run with issue 31's targets, and the sweeps themselves, rung by rung.
import { addedFrames, addedLatency } from "./added.ts";
import type { FieldFigures } from "./field.ts";
import type { Plan } from "./plan.ts";
import { STALL_MS } from "./stalls.ts";
import { ratio } from "./stats.ts";
import { SUSTAINED_DELAY_MS } from "./sustained.ts";
import { FRONTIER_BOUNDS_US, type Reading, type Rung } from "./sweep.ts";
import type { TargetName } from "./targets.ts";

export interface FieldRow {
  name: TargetName;
  status: string;
  field?: FieldFigures;
}

const int = (n: number | undefined) => (n === undefined ? "–" : Math.round(n).toLocaleString("en-US"));
const fixed = (n: number | null | undefined, digits = 2) =>
  n === null || n === undefined || !Number.isFinite(n) ? "–" : n.toFixed(digits);
const mb = (bytes: number | undefined) => (bytes === undefined ? "–" : (bytes / 2 ** 20).toFixed(1));
const clean = (status: string) => status.replace(/\s+/g, " ").replaceAll("|", "\\|").slice(0, 160);

/** A frontier reading: req/s and the rung's concurrency; "≥" when it was the sweep's last rung. */
function readingCell(r: Reading | undefined): string {
  if (!r) return "–";
  if (r.concurrency === undefined) return "0";
  return `${r.atTop ? "≥ " : ""}${int(r.rps)} (c=${r.concurrency})`;
}

/** The figures of one target, with what it adds over direct in this run. */
export interface FieldSummary {
  addedP50Us: number | undefined;
  addedP99Us: number | undefined;
  frontier: Map<number, Reading>;
  sustained: Reading | undefined;
  addedTtffP50Ms: number | undefined;
  addedGapP50Ms: number | undefined;
  addedGapP99Ms: number | undefined;
  streamsWithoutStall: number | undefined;
  idleBytes: number | undefined;
  steadyBytes: number | undefined;
  recoveredBytes: number | undefined;
}

export function summarise(field: FieldFigures | undefined, direct: FieldFigures | undefined): FieldSummary {
  const latency = field?.latency && direct?.latency ? addedLatency(field.latency, direct.latency) : undefined;
  const frames = field?.frames && direct?.frames ? addedFrames(field.frames, direct.frames) : undefined;
  return {
    addedP50Us: latency?.p50Us,
    addedP99Us: latency?.p99Us,
    frontier: new Map((field?.sweep?.frontier ?? []).map((r) => [r.boundUs, r])),
    sustained: field?.sustained?.reading,
    addedTtffP50Ms: frames?.ttffP50Ms,
    addedGapP50Ms: frames?.gapP50Ms,
    addedGapP99Ms: frames?.gapP99Ms,
    streamsWithoutStall: field?.stalls?.held,
    idleBytes: field?.memory?.idleBytes,
    steadyBytes: field?.memory?.steadyBytes,
    recoveredBytes: field?.memory?.recoveredBytes,
  };
}

function figuresTable(rows: FieldRow[], direct: FieldFigures | undefined): string[] {
  const bounds = FRONTIER_BOUNDS_US.map((b) => `req/s p99 < ${b / 1000} ms`);
  const head = [
    `| target | status | added p50 µs (c=1) | added p99 µs (c=1) | ${bounds.join(" | ")} | sustained req/s (${SUSTAINED_DELAY_MS} ms upstream) | added TTFF p50 ms | added inter-frame p50 µs | added inter-frame p99 µs | streams without stall | idle RSS MB | steady RSS MB | recovered RSS MB |`,
    `|---|---|---|---|${bounds.map(() => "---|").join("")}---|---|---|---|---|---|---|---|`,
  ];
  const body = rows.map((r) => {
    const s = summarise(r.field, direct);
    const cells = [
      r.name,
      clean(r.status),
      int(s.addedP50Us),
      int(s.addedP99Us),
      ...FRONTIER_BOUNDS_US.map((b) => readingCell(s.frontier.get(b))),
      readingCell(s.sustained),
      fixed(s.addedTtffP50Ms, 3),
      int(s.addedGapP50Ms === undefined ? undefined : s.addedGapP50Ms * 1000),
      int(s.addedGapP99Ms === undefined ? undefined : s.addedGapP99Ms * 1000),
      int(s.streamsWithoutStall),
      mb(s.idleBytes),
      mb(s.steadyBytes),
      mb(s.recoveredBytes),
    ];
    return `| ${cells.join(" | ")} |`;
  });
  return [...head, ...body];
}

interface Figure {
  label: string;
  pick: (s: FieldSummary) => number | undefined;
  /** Issue 31's target for modelgate, and whether the run meets it. */
  target?:
    | {
        text: string;
        met: (mine: number, base: Record<string, number | undefined>) => boolean | undefined;
      }
    | undefined;
}

const FIGURES: Figure[] = [
  {
    label: "added p99 µs (c=1)",
    pick: (s) => s.addedP99Us,
    target: { text: "≤ 2× nginx", met: (m, b) => (b.nginx === undefined ? undefined : m <= 2 * b.nginx) },
  },
  { label: "added p50 µs (c=1)", pick: (s) => s.addedP50Us },
  ...FRONTIER_BOUNDS_US.map(
    (bound): Figure => ({
      label: `frontier req/s, p99 < ${bound / 1000} ms`,
      pick: (s) => s.frontier.get(bound)?.rps,
      target:
        bound === 1_000
          ? { text: "> 0", met: (m) => m > 0 }
          : bound === 5_000
            ? {
                text: "≥ 0.5× bun-proxy",
                met: (m, b) => (b["bun-proxy"] ? m >= 0.5 * b["bun-proxy"] : undefined),
              }
            : undefined,
    }),
  ),
  {
    label: `sustained req/s, ${SUSTAINED_DELAY_MS} ms upstream`,
    pick: (s) => s.sustained?.rps,
    target: {
      text: "≥ 40× portkey",
      met: (m, b) => (b.portkey === undefined ? undefined : m >= 40 * b.portkey),
    },
  },
  {
    label: "added TTFF p50 µs",
    pick: (s) => (s.addedTtffP50Ms === undefined ? undefined : s.addedTtffP50Ms * 1000),
  },
  {
    label: "added inter-frame p99 µs",
    pick: (s) => (s.addedGapP99Ms === undefined ? undefined : s.addedGapP99Ms * 1000),
    target: { text: "≤ 100 µs", met: (m) => m <= 100 },
  },
  { label: "streams without stall", pick: (s) => s.streamsWithoutStall },
  {
    label: "idle RSS MB",
    pick: (s) => (s.idleBytes === undefined ? undefined : s.idleBytes / 2 ** 20),
    target: { text: "< 60 MB", met: (m) => m < 60 },
  },
  {
    label: "steady RSS MB",
    pick: (s) => (s.steadyBytes === undefined ? undefined : s.steadyBytes / 2 ** 20),
  },
  {
    label: "recovered RSS MB",
    pick: (s) => (s.recoveredBytes === undefined ? undefined : s.recoveredBytes / 2 ** 20),
  },
];

const BASELINES: readonly TargetName[] = ["nginx", "bun-proxy", "portkey"];

/** modelgate's field figures beside each baseline's, the ratios, and issue 31's targets. */
function againstBaselines(rows: FieldRow[], direct: FieldFigures | undefined): string[] {
  const summary = (name: TargetName) => {
    const row = rows.find((r) => r.name === name);
    return row?.field ? summarise(row.field, direct) : undefined;
  };
  const mine = summary("modelgate");
  if (!mine) return [];
  const bases = BASELINES.map((name) => [name, summary(name)] as const);
  const head = [
    `| figure | modelgate | ${BASELINES.join(" | ")} | ${BASELINES.map((b) => `÷ ${b}`).join(" | ")} | issue 31 target | met |`,
    `|---|---|${BASELINES.map(() => "---|").join("")}${BASELINES.map(() => "---|").join("")}---|---|`,
  ];
  const body = FIGURES.map((f) => {
    const m = f.pick(mine);
    const values = Object.fromEntries(bases.map(([name, s]) => [name, s ? f.pick(s) : undefined]));
    const met = m === undefined || !f.target ? undefined : f.target.met(m, values);
    const cells = [
      f.label,
      fixed(m, 1),
      ...BASELINES.map((b) => fixed(values[b], 1)),
      ...BASELINES.map((b) => fixed(ratio(m, values[b]))),
      f.target?.text ?? "",
      met === undefined ? "" : met ? "yes" : "no",
    ];
    return `| ${cells.join(" | ")} |`;
  });
  return [...head, ...body];
}

function rungTable(title: string, rungs: readonly Rung[]): string[] {
  return [
    title,
    "",
    "| concurrency | req/s | p50 ms | p99 ms | requests | errors |",
    "|---|---|---|---|---|---|",
    ...rungs.map(
      (r) =>
        `| ${r.concurrency} | ${int(r.rps)} | ${fixed(r.p50Us / 1000, 3)} | ${fixed(r.p99Us / 1000, 3)} | ${int(r.requests)} | ${int(r.errors)} |`,
    ),
    "",
  ];
}

function sweepsSection(rows: FieldRow[]): string[] {
  const out: string[] = [];
  for (const r of rows) {
    const f = r.field;
    if (f?.sweep) out.push(...rungTable(`Concurrency sweep, ${r.name}:`, f.sweep.rungs));
    if (f?.sustained)
      out.push(
        ...rungTable(`Sustained sweep (${f.sustained.delayMs} ms upstream), ${r.name}:`, f.sustained.rungs),
      );
    if (f?.stalls) {
      out.push(
        `Concurrent streams, ${r.name} (a stall is a gap over ${STALL_MS} ms):`,
        "",
        "| streams | completed | failed | stalled | max gap ms | at s | streams with their longest gap then | TTFF p99 ms | frames/s | seconds |",
        "|---|---|---|---|---|---|---|---|---|---|",
        ...f.stalls.steps.map(
          (s) =>
            `| ${s.streams} | ${s.completed} | ${s.failed} | ${s.stalled} | ${fixed(s.maxGapMs, 1)} | ${fixed(s.maxGapAtS, 2)} | ${s.maxGapShared} | ${fixed(s.ttffP99Ms, 1)} | ${int(s.framesPerSecond)} | ${fixed(s.seconds, 1)} |`,
        ),
        "",
      );
    }
  }
  return out;
}

const withTitle = (title: string, table: string[]) => (table.length > 0 ? [title, "", ...table, ""] : []);

export function renderField(rows: FieldRow[], plan: Plan): string[] {
  const measured = rows.filter((r) => r.field);
  if (measured.length === 0) return [];
  const direct = rows.find((r) => r.name === "direct")?.field;
  const f = plan.field;
  return [
    "## The field's method",
    "",
    `Every figure is defined in bench/README.md ("The field's method"). Added figures are the target's percentile minus direct's, both measured in this run. Sizes: concurrency 1 for ${f.latencySeconds} s; sweep rungs ${f.sweepLevels.join(", ")} of ${f.sweepSeconds} s each (a reading counts a rung with p99 under the bound and no errors; "≥" marks the sweep's last rung, where the target may carry more); sustained rungs ${f.sustainedLevels.join(", ")} of ${f.sustainedSeconds} s against the ${SUSTAINED_DELAY_MS} ms upstream (p99 < 1 s, < 0.1 % errors); ${f.frameStreams} streams one at a time for frame timing; stall steps ${f.stallSteps.join(", ")}; memory: idle over ${f.idleMs} ms before the first request, steady under ${f.memoryRate} req/s for ${f.memorySeconds} s, recovered ${f.recoverSeconds} s after.${plan.small ? " **Small sizes (--small): these figures only show the measurements work.**" : ""}`,
    "",
    ...figuresTable(measured, direct),
    "",
    "direct's row is the rig's own reach (the upstream, wrk and the stream clients share core 0): a target at direct's figure for the frontier, the sustained req/s or the streams without a stall is bounded by the rig, not by itself.",
    "",
    ...withTitle(
      "modelgate against the baselines, ratios within this run:",
      againstBaselines(measured, direct),
    ),
    ...sweepsSection(measured),
  ];
}
