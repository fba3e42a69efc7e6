// Every client path through modelgate, native and translated: a Chat, a Responses and a Messages
// client each on its own protocol's upstream channel, a Messages client on a Chat upstream and a Chat
// client on a Messages upstream. One modelgate per channel kind (alone on the target core), the
// bench upstream speaking all three protocols; per path: added latency at concurrency 1, CPU per
// request in the closed loop, and for streams the target's CPU per upstream event and added time to
// first event. Shorter phases than the main table, so the default run stays under its stated time.
import { ANSWER_TEXT, ANSWERS, type Protocol, STREAM_EVENTS } from "./answers.ts";
import type { Plan } from "./plan.ts";
import { cpuSecondsPrecise as cpuSeconds, TARGET_CORE } from "./procs.ts";
import { clientBody, writeBodyFile } from "./requests.ts";
import { percentile, ratio } from "./stats.ts";
import { timeStreams } from "./streams.ts";
import {
  type BenchContext,
  type ChannelKind,
  type ModelgateServer,
  type RunningTarget,
  startModelgateServer,
  startTarget,
} from "./targets.ts";
import { type WrkRequest, wrk } from "./wrk.ts";

export type PathName = "chat" | "responses" | "messages" | "messages-on-chat" | "chat-on-messages";

export interface PathSpec {
  name: PathName;
  client: Protocol;
  upstream: Protocol;
  /** The native path of the same client protocol (itself for a native path). */
  native: PathName;
}

export const PATHS: readonly PathSpec[] = [
  { name: "chat", client: "chat", upstream: "chat", native: "chat" },
  { name: "responses", client: "responses", upstream: "responses", native: "responses" },
  { name: "messages", client: "messages", upstream: "messages", native: "messages" },
  { name: "messages-on-chat", client: "messages", upstream: "chat", native: "messages" },
  { name: "chat-on-messages", client: "chat", upstream: "messages", native: "chat" },
];
export const PATH_NAMES: readonly PathName[] = PATHS.map((p) => p.name);

export const CLIENT_PATH: Readonly<Record<Protocol, string>> = {
  chat: "/v1/chat/completions",
  responses: "/v1/responses",
  messages: "/v1/messages",
};
const CHANNEL_KIND: Readonly<Record<Protocol, ChannelKind>> = {
  chat: "openai-chat",
  responses: "openai-responses",
  messages: "anthropic",
};
/** What a client of each protocol sends besides the key. */
const CLIENT_HEADERS: Readonly<Record<Protocol, Record<string, string>>> = {
  chat: {},
  responses: {},
  messages: { "anthropic-version": "2023-06-01" },
};

export interface Timing {
  c1: { p50Us: number; p99Us: number };
  stream: { ttfbP50Ms: number; ttfbP99Ms: number; streams: number; failed: number };
}

export interface PathFigures extends Timing {
  closed: { rps: number; cpuUsPerRequest: number };
  /** Target CPU over the stream phase per upstream event relayed (the request's own work included). */
  streamCpuUsPerEvent: number;
  streamCpuUsPerStream: number;
}

export interface PathResult {
  name: PathName;
  client: Protocol;
  upstream: Protocol;
  native: PathName;
  status: string;
  figures?: PathFigures;
}

export interface PathsReport {
  /** The upstream alone per protocol: the baseline the added figures subtract. */
  direct: Partial<Record<Protocol, Timing>>;
  paths: PathResult[];
  /** The bare Bun proxy (bun-proxy.ts) on the Chat path, same phases: the runtime's own floor. */
  floor?: { status: string; figures?: PathFigures };
}

interface Endpoint {
  url: string;
  headers: Record<string, string>;
  client: Protocol;
}

async function post(endpoint: Endpoint, body: string): Promise<Response> {
  return fetch(endpoint.url, {
    method: "POST",
    headers: { ...endpoint.headers, "content-type": "application/json" },
    body,
    signal: AbortSignal.timeout(10_000),
  });
}

/** One non-stream and one stream request: the fixed text back, and the stream up to its last event. */
export async function probePath(endpoint: Endpoint): Promise<string> {
  const answer = await post(endpoint, clientBody(endpoint.client, false));
  const text = await answer.text();
  if (answer.status !== 200) return `error: status ${answer.status}: ${text.slice(0, 200)}`;
  if (!text.includes(ANSWER_TEXT))
    return `error: the answer lacks the upstream's text: ${text.slice(0, 200)}`;
  const stream = await post(endpoint, clientBody(endpoint.client, true));
  const events = await stream.text();
  const end = ANSWERS[endpoint.client].end;
  if (stream.status !== 200 || !events.includes(end))
    return `error: stream status ${stream.status}, no ${end}: ${events.slice(-200)}`;
  return "ok";
}

const streamsOf = (endpoint: Endpoint, plan: Plan) =>
  timeStreams(
    {
      url: endpoint.url,
      headers: endpoint.headers,
      body: clientBody(endpoint.client, true),
      end: ANSWERS[endpoint.client].end,
    },
    plan.pathStreams,
    plan.streamParallel,
  );

/** A short warm-up, then concurrency 1 for the added latency. */
async function concurrencyOne(request: WrkRequest, plan: Plan): Promise<Timing["c1"]> {
  await wrk(request, { connections: 8, seconds: 1, rate: 0 });
  const c1 = await wrk(request, { connections: 1, seconds: plan.pathSeconds, rate: 0 });
  if (c1.requests === 0 || c1.errorCount > 0)
    throw new Error(`concurrency 1: ${c1.requests} requests, ${JSON.stringify(c1.errors)} errors`);
  return { p50Us: c1.latency_us.p50, p99Us: c1.latency_us.p99 };
}

function streamTiming(s: Awaited<ReturnType<typeof timeStreams>>): Timing["stream"] {
  if (s.streams === 0) throw new Error(`streams: all ${s.failed} failed`);
  return { ttfbP50Ms: s.ttfbMs.p50, ttfbP99Ms: s.ttfbMs.p99, streams: s.streams, failed: s.failed };
}

/** The upstream alone: concurrency 1 and streams, the baseline of the added figures. */
async function directTiming(endpoint: Endpoint, bodyFile: string, plan: Plan): Promise<Timing> {
  const c1 = await concurrencyOne({ url: endpoint.url, headers: endpoint.headers, bodyFile }, plan);
  return { c1, stream: streamTiming(await streamsOf(endpoint, plan)) };
}

/** Concurrency 1, the closed loop with the target's CPU per request, streams with its CPU per event. */
async function measurePath(
  endpoint: Endpoint,
  pid: number,
  bodyFile: string,
  plan: Plan,
): Promise<PathFigures> {
  const request: WrkRequest = { url: endpoint.url, headers: endpoint.headers, bodyFile };
  const c1 = await concurrencyOne(request, plan);
  const before = cpuSeconds(pid);
  const closed = await wrk(request, {
    connections: plan.closedConnections,
    seconds: plan.pathSeconds,
    rate: 0,
  });
  const closedCpu = cpuSeconds(pid) - before;
  if (closed.requests === 0 || closed.errorCount > closed.requests / 100)
    throw new Error(`closed loop: ${closed.requests} requests, ${JSON.stringify(closed.errors)} errors`);
  const streamBefore = cpuSeconds(pid);
  const streams = await streamsOf(endpoint, plan);
  const streamCpu = cpuSeconds(pid) - streamBefore;
  const streamCount = Math.max(1, streams.streams + streams.failed);
  return {
    c1,
    stream: streamTiming(streams),
    closed: { rps: closed.rps, cpuUsPerRequest: (closedCpu * 1e6) / closed.requests },
    streamCpuUsPerEvent: (streamCpu * 1e6) / (streamCount * STREAM_EVENTS),
    streamCpuUsPerStream: (streamCpu * 1e6) / streamCount,
  };
}

const mid = (xs: number[]) => percentile(xs, 50);

/** The median of each figure over the rounds. */
function medianTiming(rounds: Timing[]): Timing {
  const m = (pick: (t: Timing) => number) => mid(rounds.map(pick));
  return {
    c1: { p50Us: m((t) => t.c1.p50Us), p99Us: m((t) => t.c1.p99Us) },
    stream: {
      ttfbP50Ms: m((t) => t.stream.ttfbP50Ms),
      ttfbP99Ms: m((t) => t.stream.ttfbP99Ms),
      streams: rounds.reduce((n, t) => n + t.stream.streams, 0),
      failed: rounds.reduce((n, t) => n + t.stream.failed, 0),
    },
  };
}

function medianFigures(rounds: PathFigures[]): PathFigures {
  const m = (pick: (f: PathFigures) => number) => mid(rounds.map(pick));
  return {
    ...medianTiming(rounds),
    closed: { rps: m((f) => f.closed.rps), cpuUsPerRequest: m((f) => f.closed.cpuUsPerRequest) },
    streamCpuUsPerEvent: m((f) => f.streamCpuUsPerEvent),
    streamCpuUsPerStream: m((f) => f.streamCpuUsPerStream),
  };
}

/**
 * Measures (or in smoke mode only probes) the selected paths: one modelgate per channel kind, all
 * started first, then every round measures the upstream alone and each path in turn (so slow
 * drifts in the machine's load hit every path alike); medians over the rounds. Stops what it started.
 */
export async function measurePaths(
  ctx: BenchContext,
  plan: Plan,
  say: (line: string) => void,
): Promise<PathsReport> {
  const chosen = PATHS.filter((p) => plan.paths.includes(p.name));
  const report: PathsReport = { direct: {}, paths: chosen.map((spec) => ({ ...spec, status: "ok" })) };
  const upstreams = [...new Set(chosen.map((p) => p.upstream))];
  const servers = new Map<Protocol, ModelgateServer>();
  const endpoints = new Map<PathName, Endpoint>();
  let floor: RunningTarget | undefined;
  try {
    for (const upstream of upstreams) {
      const kind = CHANNEL_KIND[upstream];
      try {
        const server = await startModelgateServer(ctx, {
          label: `modelgate-${kind}`,
          workers: 1,
          core: TARGET_CORE,
          kind,
        });
        servers.set(upstream, server);
      } catch (error) {
        for (const r of report.paths) if (r.upstream === upstream) r.status = `error: ${String(error)}`;
      }
    }
    for (const result of report.paths) {
      const server = servers.get(result.upstream);
      if (server === undefined) continue;
      const endpoint: Endpoint = {
        url: server.base + CLIENT_PATH[result.client],
        headers: { ...server.headers, ...CLIENT_HEADERS[result.client] },
        client: result.client,
      };
      result.status = await probePath(endpoint).catch((error) => `error: ${String(error)}`);
      if (result.status === "ok") endpoints.set(result.name, endpoint);
    }
    if (plan.mode !== "full") return report;
    const directRounds = new Map<Protocol, Timing[]>();
    const pathRounds = new Map<PathName, PathFigures[]>();
    const floorRounds: PathFigures[] = [];
    if (chosen.length > 0) {
      report.floor = { status: "ok" };
      floor = await startTarget("bun-proxy", ctx).catch((error: unknown) => {
        if (report.floor) report.floor.status = `error: ${String(error)}`;
        return undefined;
      });
    }
    for (let round = 1; round <= plan.pathRounds; round++) {
      for (const upstream of upstreams) {
        say(`paths, round ${round}: the upstream alone (${upstream})`);
        const direct: Endpoint = {
          url: `http://127.0.0.1:${ctx.upstreamPort}${CLIENT_PATH[upstream]}`,
          headers: CLIENT_HEADERS[upstream],
          client: upstream,
        };
        const timing = await directTiming(direct, writeBodyFile(ctx.dir, upstream), plan);
        directRounds.set(upstream, [...(directRounds.get(upstream) ?? []), timing]);
      }
      for (const result of report.paths) {
        const endpoint = endpoints.get(result.name);
        const server = servers.get(result.upstream);
        if (endpoint === undefined || server === undefined || result.status !== "ok") continue;
        say(`paths, round ${round}: ${result.name} (${result.client} client, ${result.upstream} upstream)`);
        try {
          const bodyFile = writeBodyFile(ctx.dir, result.client);
          const figures = await measurePath(endpoint, server.proc.pid, bodyFile, plan);
          pathRounds.set(result.name, [...(pathRounds.get(result.name) ?? []), figures]);
        } catch (error) {
          result.status = `error: ${String(error)}`;
        }
      }
      if (floor !== undefined && report.floor?.status === "ok") {
        say(`paths, round ${round}: bun-proxy (chat client, chat upstream)`);
        const endpoint: Endpoint = { url: floor.url, headers: floor.headers, client: "chat" };
        try {
          floorRounds.push(await measurePath(endpoint, floor.proc.pid, writeBodyFile(ctx.dir, "chat"), plan));
        } catch (error) {
          report.floor.status = `error: ${String(error)}`;
        }
      }
    }
    if (report.floor?.status === "ok" && floorRounds.length > 0)
      report.floor.figures = medianFigures(floorRounds);
    for (const [upstream, rounds] of directRounds) report.direct[upstream] = medianTiming(rounds);
    for (const result of report.paths) {
      const rounds = pathRounds.get(result.name);
      if (rounds !== undefined && result.status === "ok") result.figures = medianFigures(rounds);
    }
    return report;
  } finally {
    for (const server of servers.values()) await server.proc.stop();
    for (const proc of floor?.owned ?? []) await proc.stop();
  }
}

/** A path's figure over its native path's (same client protocol), or null. */
export function overNative(
  report: PathsReport,
  path: PathResult,
  pick: (f: PathFigures) => number,
): number | null {
  const native = report.paths.find((p) => p.name === path.native)?.figures;
  return path.figures && native ? ratio(pick(path.figures), pick(native)) : null;
}
