// What the usage tap and the stream relay cost per streamed event, in isolation: the bench upstream's
// 64-event stream of each protocol (answers.ts), one event per chunk as the network delivers paced
// events, pushed through src/pipeline/relay/stream.ts relayStream with its UsageTap (and with a tap that
// does nothing, so the difference is the tap's share), through the tap alone on events already
// parsed, and through src/pipeline/relay/translated.ts translateStream for the bench's translated pairs,
// alone and relayed as the gateway relays them (through relayStream with the translated tap).
// Prints µs of CPU (user + system, this process) per event, the median of the rounds.
//
//   bun bench/tap-cost.ts [--src DIR] [--rounds N] [--streams N] [--json]
//   bun bench/tap-cost.ts --compare OTHER_SRC [--processes N]
//
// --src points at another tree's src/ (an older commit checked out elsewhere), so the same script
// measures both; it adapts to the older API (translateStream returning a stream). --compare runs
// this tree and OTHER_SRC alternately in N fresh processes each (default 3) and prints the medians
// side by side with their ratio.

import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { createParser } from "eventsource-parser";
import { ANSWERS, MODEL_ID, type Protocol } from "./answers.ts";
import { wholeOption } from "./options.ts";
import { loadAverage } from "./procs.ts";
import { percentile } from "./stats.ts";

type RelayModule = typeof import("../src/pipeline/relay/stream.ts");
type TapModule = typeof import("../src/pipeline/relay/tap.ts");
type TranslatedModule = typeof import("../src/pipeline/relay/translated.ts");
type UsageModule = typeof import("../src/protocols/usage.ts");
type UsageTap = InstanceType<TapModule["UsageTap"]>;

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    src: { type: "string" },
    rounds: { type: "string" },
    streams: { type: "string" },
    json: { type: "boolean" },
    compare: { type: "string" },
    processes: { type: "string" },
  },
  strict: true,
});
const whole = wholeOption;
const SRC = resolve(values.src ?? resolve(import.meta.dir, "../src"));
const ROUNDS = whole("rounds", values.rounds, 9);
const STREAMS = whole("streams", values.streams, 300);

// The relay modules live in src/pipeline/relay/ since the architecture refactor, in src/relay/ before.
const RELAY = existsSync(`${SRC}/pipeline/relay`) ? `${SRC}/pipeline/relay` : `${SRC}/relay`;
const relay: RelayModule = await import(`${RELAY}/stream.ts`);
const tapModule: TapModule = await import(`${RELAY}/tap.ts`);
const translated: TranslatedModule = await import(`${RELAY}/translated.ts`);
// The usage readers are looked up by protocol in src/protocols/ since the protocol records, in src/upstream/ before.
const usage: UsageModule = await import(
  existsSync(`${SRC}/protocols/usage.ts`) ? `${SRC}/protocols/usage.ts` : `${SRC}/upstream/usage.ts`
);
/**
 * Since the walk refactor the call stage binds the answer's usage reader and the relay's taps take
 * it (tap.ts exports readUsage); older trees made the reader inside the tap.
 */
const BOUND_READER = "readUsage" in (tapModule as object);

/** A tap for `protocol`, given its reader where this tree's API takes one. */
function newTap(protocol: Protocol): UsageTap {
  if (BOUND_READER) return new tapModule.UsageTap(protocol, usage.streamUsage(protocol));
  const OlderTap = tapModule.UsageTap as unknown as new (protocol: Protocol) => UsageTap;
  return new OlderTap(protocol);
}

const encoder = new TextEncoder();
const CHUNKS: Record<Protocol, Uint8Array[]> = {
  chat: ANSWERS.chat.events.map((e) => encoder.encode(e)),
  responses: ANSWERS.responses.events.map((e) => encoder.encode(e)),
  messages: ANSWERS.messages.events.map((e) => encoder.encode(e)),
};

const cpuUs = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
const median = (xs: number[]) => percentile(xs, 50);

/** The upstream's body: one event per chunk, each on its own turn (as paced network reads arrive). */
function body(protocol: Protocol): ReadableStream<Uint8Array> {
  const chunks = CHUNKS[protocol];
  let i = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = chunks[i++];
      if (next === undefined) controller.close();
      else controller.enqueue(next);
    },
  });
}

async function drain(stream: ReadableStream<Uint8Array>): Promise<number> {
  let bytes = 0;
  for await (const chunk of stream) bytes += chunk.length;
  return bytes;
}

/** A tap that reads nothing (and calls every stream complete): the relay without the tap's work. */
function idleTap(protocol: Protocol): UsageTap {
  const tap = newTap(protocol);
  // An own property shadows the prototype's getter (older trees set `terminal`; this works on both).
  Object.defineProperty(tap, "complete", { get: () => true });
  tap.onEvent = () => false;
  return tap;
}

async function relayOnce(protocol: Protocol, tap: UsageTap): Promise<void> {
  let ended = false;
  const out = relay.relayStream({
    body: body(protocol),
    tap,
    abort: () => undefined,
    keepaliveMs: 60_000,
    dropUsageChunk: protocol === "chat",
    onFirstByte: () => undefined,
    onEnd: async (outcome) => {
      ended = outcome === "complete";
    },
  });
  await drain(out);
  if (!ended) throw new Error(`relayStream did not complete the ${protocol} stream`);
}

/** The upstream's events parsed once (outside the timing), for the tap alone. */
function parsedEvents(protocol: Protocol): { event: string | undefined; data: string }[] {
  const events: { event: string | undefined; data: string }[] = [];
  const parser = createParser({ onEvent: (e) => events.push({ event: e.event, data: e.data }) });
  for (const text of ANSWERS[protocol].events) parser.feed(text);
  return events;
}

async function translateOnce(from: Protocol, to: Protocol): Promise<void> {
  const t = { from, to, model: MODEL_ID, inputEstimate: 19, request: { model: MODEL_ID } };
  const older = translated.translateStream as unknown as (t: object, body: ReadableStream) => unknown;
  const result: unknown = BOUND_READER
    ? translated.translateStream(t, body(from), usage.streamUsage(from))
    : older(t, body(from));
  // The oldest API returned the stream itself; later ones return { body, usage } or { body, tap }.
  const stream =
    result instanceof ReadableStream
      ? result
      : (result as ReturnType<TranslatedModule["translateStream"]>).body;
  if ((await drain(stream)) === 0) throw new Error(`translateStream ${from} → ${to} wrote nothing`);
}

/**
 * A translated stream as the gateway relays it: the translator's output through relayStream with
 * the translated tap. Since translateReader the relay reads the translator directly; before, the
 * translator was a TransformStream the upstream body was piped through (then read by the relay).
 */
async function relayTranslatedOnce(from: Protocol, to: Protocol): Promise<void> {
  const t = { from, to, model: MODEL_ID, inputEstimate: 19, request: { model: MODEL_ID } };
  const direct = (translated as { translateReader?: TranslatedModule["translateReader"] }).translateReader;
  const source = direct
    ? direct(t, body(from).getReader() as never, usage.streamUsage(from))
    : translated.translateStream(t, body(from), usage.streamUsage(from));
  let ended = false;
  const out = relay.relayStream({
    body: source.body,
    tap: source.tap,
    abort: () => undefined,
    keepaliveMs: 60_000,
    dropUsageChunk: false,
    onFirstByte: () => undefined,
    onEnd: async (outcome) => {
      ended = outcome === "complete";
    },
  });
  await drain(out);
  if (!ended) throw new Error(`relayStream did not complete the translated ${from} → ${to} stream`);
}

/** µs of CPU per upstream event for `run` over STREAMS streams: the median of ROUNDS rounds. */
async function perEvent(protocol: Protocol, run: () => Promise<void> | void): Promise<number> {
  const events = CHUNKS[protocol].length;
  for (let i = 0; i < 50; i++) await run();
  const rounds: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    Bun.gc(true);
    const before = cpuUs();
    for (let i = 0; i < STREAMS; i++) await run();
    rounds.push((cpuUs() - before) / (STREAMS * events));
  }
  return median(rounds);
}

if (values.compare !== undefined) {
  await compare(resolve(values.compare), whole("processes", values.processes, 3));
  process.exit(0);
}

const figures: Record<string, number> = {};
const protocols: Protocol[] = ["chat", "responses", "messages"];
for (const protocol of protocols) {
  const events = parsedEvents(protocol);
  figures[`tap alone, ${protocol}`] = await perEvent(protocol, () => {
    const tap = newTap(protocol);
    for (const e of events) tap.onEvent(e.event, e.data);
    if (!tap.reported) throw new Error(`the ${protocol} tap read no usage`);
  });
  figures[`relay with tap, ${protocol}`] = await perEvent(protocol, () =>
    relayOnce(protocol, newTap(protocol)),
  );
  figures[`relay, idle tap, ${protocol}`] = await perEvent(protocol, () =>
    relayOnce(protocol, idleTap(protocol)),
  );
}
const pairs: [Protocol, Protocol][] = [
  ["chat", "messages"],
  ["messages", "chat"],
  ["responses", "chat"],
];
for (const [from, to] of pairs)
  figures[`translate ${from} → ${to}`] = await perEvent(from, () => translateOnce(from, to));
// The relayed translation needs a tap per translated stream (since the walk refactor).
if (BOUND_READER)
  for (const [from, to] of pairs)
    figures[`relay translated ${from} → ${to}`] = await perEvent(from, () => relayTranslatedOnce(from, to));

if (values.json) console.log(JSON.stringify({ src: SRC, rounds: ROUNDS, streams: STREAMS, figures }));
else {
  console.log(`µs CPU per upstream event (median of ${ROUNDS} rounds of ${STREAMS} streams), src ${SRC}`);
  for (const [name, us] of Object.entries(figures)) console.log(`${name.padEnd(32)} ${us.toFixed(3)}`);
}

/** This tree and `other` alternately, `processes` fresh processes each; medians side by side. */
async function compare(other: string, processes: number): Promise<void> {
  const runs: Record<"this" | "other", Record<string, number>[]> = { this: [], other: [] };
  const load = loadAverage;
  const loadBefore = load();
  for (let i = 0; i < processes; i++) {
    for (const [side, src] of [
      ["this", SRC],
      ["other", other],
    ] as const) {
      const args = ["--src", src, "--rounds", String(ROUNDS), "--streams", String(STREAMS), "--json"];
      const child = Bun.spawnSync([process.execPath, import.meta.path, ...args], { stderr: "inherit" });
      if (child.exitCode !== 0) throw new Error(`tap-cost on ${src} failed (exit ${child.exitCode})`);
      const parsed = JSON.parse(child.stdout.toString()) as { figures: Record<string, number> };
      runs[side].push(parsed.figures);
    }
  }
  console.log(
    `µs CPU per upstream event, median of ${processes} processes × ${ROUNDS} rounds of ${STREAMS} streams,`,
  );
  console.log(`alternating; load average ${loadBefore} before, ${load()} after`);
  console.log(`| measure | ${SRC} | ${other} | this ÷ other |`);
  console.log("|---|---|---|---|");
  for (const name of Object.keys(runs.this[0] ?? {})) {
    const mine = median(runs.this.map((f) => f[name] ?? 0));
    const theirs = median(runs.other.map((f) => f[name] ?? Number.NaN));
    console.log(`| ${name} | ${mine.toFixed(3)} | ${theirs.toFixed(3)} | ${(mine / theirs).toFixed(2)} |`);
  }
}
