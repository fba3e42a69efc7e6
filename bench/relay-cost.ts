// The stream relay's per-event cost by stage, in one process: the bench upstream's 64-event Chat
// stream (answers.ts, one event per chunk) read as the gateway reads an upstream body, stage by
// stage, so each stage's share is its figure minus the one before:
//   read         the body's reader read in a loop (the source's own cost: the floor)
//   pump         the same, each chunk written to a direct stream drained as the relay's is (the
//                relay's floor: a read loop in JavaScript and its client stream)
//   guarded      the reader through AttemptGuard.openBody's GuardedBody (timeouts, lease)
//   relay        relayStream over the plain reader with the Chat UsageTap, its client stream drained
//   relay+guard  relayStream over the GuardedBody: the native stream path of the gateway
//   translated   a Chat upstream relayed to a Messages client (translateReader over the GuardedBody)
// Prints µs of CPU per event (median of the rounds). With --callgrind, instructions per event
// instead, which a loaded machine does not move: each stage in its own processes under callgrind,
// counting only the measured streams (see instructions() below).
//
//   bun bench/relay-cost.ts [--stage NAME] [--streams N] [--rounds N] [--warmup N]
//   bun bench/relay-cost.ts --callgrind [--stages a,b] [--streams N] [--warmup N] [--processes N]
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { relayStream } from "../src/pipeline/relay/stream.ts";
import { UsageTap } from "../src/pipeline/relay/tap.ts";
import { translateReader } from "../src/pipeline/relay/translated.ts";
import { streamUsage } from "../src/protocols/usage.ts";
import type { Channel, Lease } from "../src/upstream/channels.ts";
import { AttemptGuard, type BodyReader, type ResolvedTimeouts } from "../src/upstream/guard.ts";
import { ANSWERS, MODEL_ID, STREAM_EVENTS } from "./answers.ts";
import { wholeOption } from "./options.ts";
import { loadAverage } from "./procs.ts";
import { percentile } from "./stats.ts";

const STAGES = ["read", "pump", "guarded", "relay", "relay+guard", "translated"] as const;
type Stage = (typeof STAGES)[number];

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    stage: { type: "string" },
    stages: { type: "string" },
    streams: { type: "string" },
    rounds: { type: "string" },
    warmup: { type: "string" },
    callgrind: { type: "boolean" },
    handshake: { type: "string" },
    processes: { type: "string" },
  },
  strict: true,
});
const STREAMS = wholeOption("streams", values.streams, 300);
const ROUNDS = wholeOption("rounds", values.rounds, 7);
const WARMUP = wholeOption("warmup", values.warmup, 200);

const encoder = new TextEncoder();
const CHUNKS = ANSWERS.chat.events.map((e) => encoder.encode(e));
const TIMEOUTS: ResolvedTimeouts = {
  connect_ms: 10_000,
  first_byte_ms: 30_000,
  idle_ms: 30_000,
  total_ms: 600_000,
};
const LEASE: Lease = {
  channel: undefined as unknown as Channel,
  credential: undefined,
  release: () => undefined,
};

/** The upstream body: one event per chunk, each read on its own turn. */
function body(): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = CHUNKS[i++];
      if (next === undefined) controller.close();
      else controller.enqueue(next);
    },
  });
}

async function guarded(): Promise<BodyReader> {
  const guard = new AttemptGuard("bench", TIMEOUTS, new AbortController().signal);
  const opened = await guard.openBody(new Response(body()), LEASE);
  if (opened === undefined) throw new Error("no body");
  return opened;
}

async function drainReader(reader: BodyReader): Promise<void> {
  for (;;) if ((await reader.read()).done) return;
}

async function relay(source: BodyReader, tap = new UsageTap("chat", streamUsage("chat"))): Promise<void> {
  let outcome = "";
  const out = relayStream({
    body: source,
    tap,
    abort: () => undefined,
    keepaliveMs: 60_000,
    dropUsageChunk: true,
    onFirstByte: () => undefined,
    onEnd: async (o) => {
      outcome = o;
      return undefined;
    },
  });
  for await (const _ of out);
  if (outcome !== "complete") throw new Error(`the relay ended ${outcome}`);
}

/** The upstream's chunks written as they are to a direct stream, drained: a read loop and its client stream. */
async function pump(source: BodyReader): Promise<void> {
  const out = new ReadableStream<Uint8Array>({
    type: "direct",
    async pull(controller) {
      for (;;) {
        const step = await source.read();
        if (step.done) break;
        controller.write(step.value);
      }
      controller.close();
    },
  });
  for await (const _ of out);
}

const RUN: Record<Stage, () => Promise<void>> = {
  read: () => drainReader(body().getReader() as BodyReader),
  pump: () => pump(body().getReader() as BodyReader),
  guarded: async () => drainReader(await guarded()),
  relay: () => relay(body().getReader() as BodyReader),
  "relay+guard": async () => relay(await guarded()),
  translated: async () => {
    const t = {
      from: "chat",
      to: "messages",
      model: MODEL_ID,
      inputEstimate: 19,
      request: { model: MODEL_ID },
    } as const;
    const translated = translateReader(t, await guarded(), streamUsage("chat"));
    await relay(translated.body, translated.tap as never);
  },
};

const cpuUs = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

async function perEvent(stage: Stage): Promise<number> {
  const run = RUN[stage];
  for (let i = 0; i < WARMUP; i++) await run();
  const rounds: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const before = cpuUs();
    for (let i = 0; i < STREAMS; i++) await run();
    rounds.push((cpuUs() - before) / (STREAMS * STREAM_EVENTS));
  }
  return percentile(rounds, 50);
}

function stageList(text: string | undefined): Stage[] {
  const names = text?.split(",") ?? [...STAGES];
  for (const n of names)
    if (!STAGES.includes(n as Stage)) throw new Error(`unknown stage ${n}; known: ${STAGES.join(", ")}`);
  return names as Stage[];
}

/**
 * Instructions per event of one stage under callgrind: the child warms up uninstrumented (faster),
 * instrumentation is switched on (`callgrind_control --instr=on`), it runs the measured streams,
 * and the dump taken then (`-d`) holds the measured streams alone (every thread), with no start-up,
 * warm-up or exit in it.
 */
async function instructions(stage: Stage, streams: number): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), "relay-cost-"));
  const child = Bun.spawn(
    [
      "valgrind",
      "--tool=callgrind",
      "--instr-atstart=no",
      `--callgrind-out-file=${dir}/out`,
      process.execPath,
      import.meta.path,
      "--stage",
      stage,
      "--streams",
      String(streams),
      "--rounds",
      "1",
      "--warmup",
      String(WARMUP),
      "--handshake",
      dir,
    ],
    { stdout: "pipe", stderr: "pipe", env: { ...process.env, BUN_JSC_useConcurrentJIT: "0" } },
  );
  const control = (flag: string) => {
    const run = Bun.spawnSync(["callgrind_control", flag, String(child.pid)], { stderr: "pipe" });
    if (run.exitCode !== 0) throw new Error(`callgrind_control ${flag}: ${run.stderr}`);
  };
  const waitFor = async (file: string) => {
    while (!existsSync(`${dir}/${file}`)) {
      if (child.exitCode !== null)
        throw new Error(`${stage}: the child exited (${await new Response(child.stderr).text()})`);
      await Bun.sleep(50);
    }
  };
  await waitFor("warm");
  control("--instr=on");
  writeFileSync(`${dir}/go`, "");
  await waitFor("done");
  control("-d");
  // The dump is all that is needed: the child is not left to exit slowly under callgrind.
  child.kill();
  await child.exited;
  const dumps = readdirSync(dir).filter((f) => f.startsWith("out") && f !== "out");
  const dump = dumps.sort().at(0);
  if (dump === undefined) throw new Error(`${stage}: no dump in ${dir} (${readdirSync(dir)})`);
  const totals = /^(?:summary|totals): (\d+)/m.exec(readFileSync(`${dir}/${dump}`, "utf8"));
  if (totals === null) throw new Error(`${stage}: no totals in ${dump}`);
  rmSync(dir, { recursive: true });
  return Number(totals[1]) / (streams * STREAM_EVENTS);
}

/** In a child under callgrind: tell the parent at each step and wait for its go (polling: the process keeps running). */
async function handshake(dir: string, stage: Stage): Promise<void> {
  const waitFor = async (file: string) => {
    while (!existsSync(`${dir}/${file}`)) await Bun.sleep(5);
  };
  const run = RUN[stage];
  for (let i = 0; i < WARMUP; i++) await run();
  writeFileSync(`${dir}/warm`, "");
  await waitFor("go");
  for (let i = 0; i < STREAMS; i++) await run();
  writeFileSync(`${dir}/done`, "");
  await waitFor("end");
}

if (values.handshake !== undefined) {
  await handshake(values.handshake, stageList(values.stage)[0] as Stage);
} else if (values.callgrind) {
  console.log(
    `instructions per event (callgrind, ${STREAMS} streams after ${WARMUP} of warm-up), load ${loadAverage()}`,
  );
  // A compilation or a collection that lands in the measured streams of one process adds to it:
  // several processes, each figure printed, the smallest the stage's steady cost.
  const processes = wholeOption("processes", values.processes, 1);
  for (const stage of stageList(values.stages)) {
    const counts: number[] = [];
    for (let i = 0; i < processes; i++) counts.push(Math.round(await instructions(stage, STREAMS)));
    console.log(`${stage.padEnd(12)} min ${Math.min(...counts)}  (${counts.join(", ")})`);
  }
} else {
  const stages = values.stage === undefined ? stageList(values.stages) : stageList(values.stage);
  console.log(`µs CPU per event (median of ${ROUNDS} rounds of ${STREAMS} streams), load ${loadAverage()}`);
  for (const stage of stages) console.log(`${stage.padEnd(12)} ${(await perEvent(stage)).toFixed(3)}`);
}
