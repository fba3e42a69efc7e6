// Streaming figures: time to first event and gaps between events (fetch, a few streams at a time),
// and how many streams a target holds at once (raw sockets, ramped in bounded steps).
import { percentile } from "./stats.ts";

export interface StreamTarget {
  url: string;
  headers: Record<string, string>;
  /** JSON body of a streaming request (with `"stream": true`). */
  body: string;
  /** Text only the stream's last event holds (default Chat's `data: [DONE]`, not counted as an event). */
  end?: string;
}

export interface StreamTiming {
  streams: number;
  failed: number;
  ttfbMs: { p50: number; p99: number };
  gapMs: { p50: number; p99: number; max: number };
  eventsPerStream: number;
}

const DATA = "data:";
const DONE = "data: [DONE]";

/** One stream: request start to first event, and each event's arrival time. */
async function timeOne(target: StreamTarget): Promise<{ ttfb: number; gaps: number[]; events: number }> {
  const started = performance.now();
  const response = await fetch(target.url, {
    method: "POST",
    headers: { ...target.headers, "content-type": "application/json" },
    body: target.body,
    signal: AbortSignal.timeout(15_000),
  });
  if (response.status !== 200 || !response.body) throw new Error(`status ${response.status}`);
  const decoder = new TextDecoder();
  const end = target.end ?? DONE;
  let carry = "";
  let endCarry = "";
  const stamps: number[] = [];
  let sawDone = false;
  for await (const chunk of response.body) {
    const now = performance.now();
    const piece = decoder.decode(chunk, { stream: true });
    const text = carry + piece;
    let at = text.indexOf(DATA);
    while (at !== -1) {
      if (!text.startsWith(DONE, at)) stamps.push(now);
      at = text.indexOf(DATA, at + DATA.length);
    }
    carry = text.slice(-(DATA.length - 1));
    const seen = endCarry + piece;
    if (seen.includes(end)) sawDone = true;
    endCarry = seen.slice(-(end.length - 1));
  }
  const first = stamps[0];
  if (first === undefined || !sawDone)
    throw new Error(`stream ended without events or its last event (${end})`);
  const gaps = stamps.slice(1).map((t, i) => t - (stamps[i] ?? t));
  return { ttfb: first - started, gaps, events: stamps.length };
}

/** Runs `count` streams, `parallel` at a time, and summarises their timing. */
export async function timeStreams(
  target: StreamTarget,
  count: number,
  parallel: number,
): Promise<StreamTiming> {
  const ttfbs: number[] = [];
  const gaps: number[] = [];
  let failed = 0;
  let events = 0;
  let next = 0;
  const worker = async () => {
    while (next < count) {
      next++;
      try {
        const one = await timeOne(target);
        ttfbs.push(one.ttfb);
        gaps.push(...one.gaps);
        events += one.events;
      } catch {
        failed++;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, count) }, worker));
  return {
    streams: ttfbs.length,
    failed,
    ttfbMs: { p50: percentile(ttfbs, 50), p99: percentile(ttfbs, 99) },
    gapMs: { p50: percentile(gaps, 50), p99: percentile(gaps, 99), max: Math.max(0, ...gaps) },
    eventsPerStream: ttfbs.length > 0 ? events / ttfbs.length : 0,
  };
}

export interface HeldStreams {
  /** Streams that had their first event, at the highest step fully reached. */
  held: number;
  /** Steps tried, with the RSS of the target once every stream of the step was held. */
  steps: { streams: number; held: number; rssBytes: number; seconds: number }[];
  rssBefore: number;
  rssPerStreamBytes: number;
}

/** A raw HTTP/1.1 request, so thousands of streams cost the client only a socket each. */
export function rawRequest(target: StreamTarget): Uint8Array {
  const url = new URL(target.url);
  const body = Buffer.from(target.body);
  const lines = [
    `POST ${url.pathname} HTTP/1.1`,
    `Host: ${url.host}`,
    "Content-Type: application/json",
    `Content-Length: ${body.length}`,
    ...Object.entries(target.headers).map(([name, value]) => `${name}: ${value}`),
  ];
  return Buffer.concat([Buffer.from(`${lines.join("\r\n")}\r\n\r\n`), body]);
}

interface Holder {
  opened: number;
  held: number;
  failed: number;
  sockets: Set<{ end(): void; terminate(): void }>;
}

async function openBatch(target: StreamTarget, holder: Holder, count: number): Promise<void> {
  const url = new URL(target.url);
  const request = rawRequest(target);
  const opens = Array.from({ length: count }, async () => {
    holder.opened++;
    // 0: waiting for the status line, 1: status 200 seen, waiting for the first event, 2: decided.
    let state = 0;
    try {
      const socket = await Bun.connect({
        hostname: url.hostname,
        port: Number(url.port),
        socket: {
          data(_socket, data) {
            if (state === 0) {
              const ok = data.toString("latin1", 0, 12).startsWith("HTTP/1.1 200");
              state = ok ? 1 : 2;
              if (!ok) holder.failed++;
            }
            if (state === 1 && data.includes(DATA)) {
              state = 2;
              holder.held++;
            }
          },
          close() {
            if (state !== 2) holder.failed++;
            state = 2;
          },
          error() {},
        },
      });
      holder.sockets.add(socket);
      socket.write(request);
    } catch {
      holder.failed++;
    }
  });
  await Promise.all(opens);
}

/** Opens streams in steps up to `max`, waiting at each step until all are held (bounded). */
export async function holdStreams(
  target: StreamTarget,
  steps: number[],
  rss: () => number,
  stepTimeoutMs = 20_000,
): Promise<HeldStreams> {
  const holder: Holder = { opened: 0, held: 0, failed: 0, sockets: new Set() };
  const rssBefore = rss();
  const result: HeldStreams = { held: 0, steps: [], rssBefore, rssPerStreamBytes: 0 };
  try {
    for (const step of steps) {
      const started = performance.now();
      while (holder.opened < step) await openBatch(target, holder, Math.min(250, step - holder.opened));
      const deadline = Date.now() + stepTimeoutMs;
      while (holder.held + holder.failed < step && Date.now() < deadline) await Bun.sleep(50);
      const seconds = (performance.now() - started) / 1000;
      result.steps.push({ streams: step, held: holder.held, rssBytes: rss(), seconds });
      if (holder.held < step) break;
      result.held = step;
    }
  } finally {
    for (const socket of holder.sockets) socket.terminate();
  }
  const top = result.steps.findLast((s) => s.streams === result.held);
  if (top && result.held > 0) result.rssPerStreamBytes = (top.rssBytes - rssBefore) / result.held;
  return result;
}
