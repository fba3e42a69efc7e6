// Benchmark (not a test): the media endpoints beside the chat path, in one run. Builds the
// executable and starts it with OpenAI-kind channels to a fixed-answer upstream (its own process,
// bench/media-upstream.ts); then, rounds interleaved:
// - chat and embeddings (floats asked, and base64 as the official SDKs ask): added latency at concurrency 1 (p50 through the gateway minus p50 to the
//   upstream directly) and the gateway's CPU per request over a closed loop of 8 clients;
// - speech: added time to the first audio byte (through the gateway minus directly);
// - transcription: the gateway's peak RSS (VmHWM, reset through /proc/PID/clear_refs) while it
//   receives one 24.9 MB WAV upload, beside its RSS before.
// Usage: ./node_modules/.bin/bun bench/media.ts [--rounds N] [--json]
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { writeVocabulary } from "../scripts/vocabulary.ts";
import { cpuSecondsPrecise, freePort } from "./procs.ts";
import { percentile } from "./stats.ts";

const root = resolve(import.meta.dir, "..");
const roundsArg = process.argv.indexOf("--rounds");
const ROUNDS = roundsArg > 0 ? Number(process.argv[roundsArg + 1]) : 3;
const C1_REQUESTS = 200;
const CLOSED_REQUESTS = 1200;
const CLOSED_CLIENTS = 8;
const SPEECH_REQUESTS = 40;

function buildBinary(dir: string): string {
  const bin = join(dir, "modelgate");
  writeVocabulary();
  const build = Bun.spawnSync([
    process.execPath,
    "build",
    "--compile",
    join(root, "src/main.ts"),
    "--outfile",
    bin,
  ]);
  if (build.exitCode !== 0) throw new Error(build.stderr.toString());
  return bin;
}

async function waitForLine(stream: ReadableStream<Uint8Array>, pattern: RegExp): Promise<string> {
  let text = "";
  const reader = stream.getReader();
  while (!pattern.test(text)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`process exited before ${pattern}:\n${text}`);
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return text;
}

interface Target {
  url: string;
  headers: Record<string, string>;
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

const CHAT = JSON.stringify({
  model: "modelx-5.4-mini",
  messages: [{ role: "user", content: "Say something short." }],
  max_tokens: 64,
});
const EMBED = JSON.stringify({
  model: "modelx-embed-3-small",
  input: ["a sentence to embed for the benchmark"],
});
/** What the official SDKs send: base64 asked for, decoded by the client. */
const EMBED_BASE64 = JSON.stringify({
  model: "modelx-embed-3-small",
  input: ["a sentence to embed for the benchmark"],
  encoding_format: "base64",
});
const SPEECH = JSON.stringify({
  model: "modelx-tts-1",
  input: "A sentence to speak for the benchmark.",
  voice: "alloy",
});

function post(target: Target, path: string, body: string): Promise<Response> {
  return fetch(`${target.url}${path}`, {
    method: "POST",
    headers: { ...target.headers, "content-type": "application/json" },
    body,
  });
}

async function c1(target: Target, path: string, body: string): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < C1_REQUESTS; i++) {
    times.push(
      await timed(async () => {
        const r = await post(target, path, body);
        await r.arrayBuffer();
        if (r.status !== 200) throw new Error(`${path} answered ${r.status}`);
      }),
    );
  }
  return times;
}

async function closedLoop(target: Target, path: string, body: string, pid: number): Promise<number> {
  const before = cpuSecondsPrecise(pid);
  let left = CLOSED_REQUESTS;
  await Promise.all(
    Array.from({ length: CLOSED_CLIENTS }, async () => {
      while (left-- > 0) {
        const r = await post(target, path, body);
        await r.arrayBuffer();
      }
    }),
  );
  return ((cpuSecondsPrecise(pid) - before) / CLOSED_REQUESTS) * 1e6;
}

async function firstByte(target: Target): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < SPEECH_REQUESTS; i++) {
    const start = performance.now();
    const r = await post(target, "/v1/audio/speech", SPEECH);
    const reader = (r.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    times.push(performance.now() - start);
    while (!(await reader.read()).done) {
      // drain
    }
  }
  return times;
}

function status(pid: number): { rssMb: number; peakMb: number } {
  const text = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(text)?.[1] ?? 0);
  return { rssMb: kb("VmRSS") / 1024, peakMb: kb("VmHWM") / 1024 };
}

function wav(bytes: number): Uint8Array {
  const data = bytes - 44;
  const b = Buffer.alloc(bytes);
  b.write("RIFF", 0);
  b.writeUInt32LE(36 + data, 4);
  b.write("WAVE", 8);
  b.write("fmt ", 12);
  b.writeUInt32LE(16, 16);
  b.writeUInt16LE(1, 20);
  b.writeUInt16LE(1, 22);
  b.writeUInt32LE(16_000, 24);
  b.writeUInt32LE(32_000, 28);
  b.writeUInt16LE(2, 32);
  b.writeUInt16LE(16, 34);
  b.write("data", 36);
  b.writeUInt32LE(data, 40);
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

async function uploadPeak(
  gateway: Target,
  pid: number,
): Promise<{ beforeMb: number; peakMb: number; status: number }> {
  const file = wav(Math.floor(24.9 * 1024 * 1024));
  Bun.gc(true);
  await Bun.sleep(200);
  // Resets VmHWM to the current RSS (Linux: "5" to clear_refs), so the peak is this upload's.
  writeFileSync(`/proc/${pid}/clear_refs`, "5");
  const before = status(pid).rssMb;
  const form = new FormData();
  form.append("model", "modelx-transcribe-1");
  form.append("file", new Blob([file], { type: "audio/wav" }), "long.wav");
  const r = await fetch(`${gateway.url}/v1/audio/transcriptions`, {
    method: "POST",
    headers: gateway.headers,
    body: form,
  });
  await r.arrayBuffer();
  return { beforeMb: before, peakMb: status(pid).peakMb, status: r.status };
}

const median = (xs: number[]) => percentile(xs, 50);

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "modelgate-media-bench-"));
  const port = freePort();
  const upstreamProc = Bun.spawn(
    [process.execPath, join(import.meta.dir, "media-upstream.ts"), String(port)],
    {
      stdout: "pipe",
      stderr: "inherit",
    },
  );
  let gatewayProc: Bun.Subprocess<"ignore", "ignore", "pipe"> | undefined;
  try {
    await waitForLine(upstreamProc.stdout, /listening/);
    const upstreamUrl = `http://127.0.0.1:${port}`;
    const bin = buildBinary(dir);
    const config = join(dir, "modelgate.toml");
    writeFileSync(
      config,
      `[bootstrap]\nbalance_usd = "1000000"\n[server]\naccess_log = false\n[[channels]]\nkind = "openai-chat"\nname = "bench"\nbase_url = "${upstreamUrl}/v1"\nmodels = ["modelx-5.4-mini", "modelx-embed-3-small", "modelx-tts-1", "modelx-transcribe-1"]\n`,
    );
    gatewayProc = Bun.spawn(
      [bin, "serve", "--listen", "127.0.0.1:0", "--db", `sqlite://${join(dir, "db")}`, "--config", config],
      { cwd: dir, stdin: "ignore", stdout: "ignore", stderr: "pipe" },
    );
    const text = await waitForLine(gatewayProc.stderr, /"msg":"modelgate listening"/);
    const gateway: Target = {
      url: /"url":"([^"]+)"/.exec(text)?.[1] ?? "",
      headers: { authorization: `Bearer ${/^\s{4}(sk-[A-Za-z0-9_-]+)$/m.exec(text)?.[1] ?? ""}` },
    };
    const direct: Target = { url: upstreamUrl, headers: {} };
    const pid = gatewayProc.pid;
    // Warm both paths (JIT, connections, the tokenizer's vocabulary).
    await c1(gateway, "/v1/chat/completions", CHAT);
    await c1(gateway, "/v1/embeddings", EMBED);
    const rounds: Record<string, number>[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const row: Record<string, number> = {};
      for (const [name, path, body] of [
        ["chat", "/v1/chat/completions", CHAT],
        ["embeddings_float", "/v1/embeddings", EMBED],
        ["embeddings_base64", "/v1/embeddings", EMBED_BASE64],
      ] as const) {
        const through = median(await c1(gateway, path, body));
        const straight = median(await c1(direct, path, body));
        row[`${name}_added_p50_ms`] = through - straight;
        row[`${name}_cpu_us_per_request`] = await closedLoop(gateway, path, body, pid);
      }
      row.speech_added_ttfb_p50_ms = median(await firstByte(gateway)) - median(await firstByte(direct));
      rounds.push(row);
    }
    const upload = await uploadPeak(gateway, pid);
    const result = { rounds, upload, load: readFileSync("/proc/loadavg", "utf8").trim() };
    if (process.argv.includes("--json")) {
      console.log(JSON.stringify(result, null, 2));
      return;
    }
    const keys = Object.keys(rounds[0] ?? {});
    console.log(`# Media endpoints beside chat (${ROUNDS} interleaved rounds; load ${result.load})\n`);
    console.log(`| figure | ${rounds.map((_, i) => `round ${i + 1}`).join(" | ")} | median |`);
    console.log(`|---|${rounds.map(() => "---|").join("")}---|`);
    for (const key of keys) {
      const values = rounds.map((r) => r[key] ?? 0);
      console.log(
        `| ${key} | ${values.map((x) => x.toFixed(3)).join(" | ")} | ${median(values).toFixed(3)} |`,
      );
    }
    console.log(
      `\n24.9 MB WAV transcription upload: status ${upload.status}, RSS before ${upload.beforeMb.toFixed(1)} MB, peak during ${upload.peakMb.toFixed(1)} MB (+${(upload.peakMb - upload.beforeMb).toFixed(1)} MB).`,
    );
  } finally {
    gatewayProc?.kill("SIGTERM");
    await gatewayProc?.exited;
    upstreamProc.kill("SIGTERM");
    await upstreamProc.exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
