// The hostile soak (issue 25's acceptance): normal chat traffic at a fixed rate, first alone (the
// clean phase), then with 1,000 hostile requests of the kinds that used to stall the gateway mixed
// in (long unbroken prompts, image uploads over the simulator's budget, bodies declared over the
// cap, gzip bombs), sent by a process of its own. Reports the normal traffic's p99 in both phases,
// the gateway's RSS (the median of 250 ms samples through the first clean window, and through each
// 5 s of normal traffic after the hostile phase; its peak), and its CPU in each phase.
// `bun bench/hostile.ts [--bin PATH] [--seconds N] [--rate R] [--hostile N] [--rounds N] [--only KIND]
// [--served] [--settle N] [--warmup N]` (N: each phase's length, default 20; the whole run takes about 100 s). `--cpu N` instead
// measures the gateway's CPU per hostile request of each kind, by thread. `--served`: the normal
// traffic also uses, once a second each and within their limits, the endpoints and body paths the
// hostile kinds reach (an edit of a 512x512 PNG, a chat of ~100 KB of prose, a gzip-encoded chat),
// ten a second each during the warm-up, so the RSS start already holds the code those paths
// compile; only the chats' latencies are the measure. `--settle N`: N steps of 5 s after the
// hostile phase (default 4).
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { gzipSync } from "node:zlib";
import { PNG } from "pngjs";
import { writeVocabulary } from "../scripts/vocabulary.ts";
import { cpuSeconds, loadAverage, rssBytes } from "./procs.ts";

const ROOT = resolve(import.meta.dir, "..");
const { values } = parseArgs({
  options: {
    bin: { type: "string" },
    seconds: { type: "string" },
    rate: { type: "string" },
    only: { type: "string" },
    hostile: { type: "string" },
    rounds: { type: "string" },
    cpu: { type: "string" },
    served: { type: "boolean" },
    settle: { type: "string" },
    warmup: { type: "string" },
    // The hostile sender's role (a child process of the run): the gateway's address and key.
    sender: { type: "boolean" },
    url: { type: "string" },
    key: { type: "string" },
  },
});
const PHASE_SECONDS = Number(values.seconds ?? 20);
const NORMAL_RATE = Number(values.rate ?? 50);
const HOSTILE = Number(values.hostile ?? 1000);
/** Clean and hostile windows alternate this many times (each PHASE_SECONDS / ROUNDS long), so a
 * shared machine's load drifting over the run falls on both alike. */
const ROUNDS = Number(values.rounds ?? 2);
/** How many 5 s steps of normal traffic follow the hostile phase, RSS read through each (`--settle N`). */
const SETTLE_STEPS = Number(values.settle ?? 4);
/** Chats of the warm-up's closed loop, before anything is measured (`--warmup N`). */
const WARMUP_REQUESTS = Number(values.warmup ?? 20_000);

async function binary(dir: string): Promise<string> {
  if (values.bin !== undefined) return values.bin;
  writeVocabulary();
  const outfile = join(dir, "modelgate");
  const build = Bun.spawnSync([
    process.execPath,
    "build",
    "--compile",
    "--splitting",
    join(ROOT, "src/main.ts"),
    "--outfile",
    outfile,
  ]);
  if (build.exitCode !== 0) throw new Error(build.stderr.toString());
  return outfile;
}

async function start(bin: string, dir: string) {
  const proc = Bun.spawn([bin, "serve", "--listen", "127.0.0.1:0", "--db", `sqlite://${join(dir, "m.db")}`], {
    cwd: dir,
    stdout: "ignore",
    stderr: "pipe",
  });
  let log = "";
  const reader = proc.stderr.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the gateway exited:\n${log}`);
    log += new TextDecoder().decode(value);
    const url = /"msg":"modelgate listening","url":"([^"]+)"/.exec(log)?.[1];
    const key = /^\s{4}(sk-[A-Za-z0-9_-]+)$/m.exec(log)?.[1];
    if (url && key) {
      void (async () => {
        while (!(await reader.read()).done) {}
      })();
      return { proc, url, key };
    }
  }
}

/** The gateway's resident memory by kind, MB: anonymous (heaps) and file-backed (the executable's pages). */
function rssParts(pid: number): string {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const mb = (field: string) =>
    (Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? 0) / 1024).toFixed(0);
  return `anonymous ${mb("RssAnon")} MB, file ${mb("RssFile")} MB`;
}

/**
 * The gateway's RSS sampled every 250 ms while `work` runs, and the median of the samples: one
 * reading can land on either side of a collection (a legitimate edit's garbage alone moves it by
 * several MB), the median of a window does not.
 */
async function medianRss<T>(pid: number, work: Promise<T>): Promise<{ result: T; rss: number }> {
  const samples = [rssBytes(pid)];
  const sampler = setInterval(() => samples.push(rssBytes(pid)), 250);
  const result = await work;
  clearInterval(sampler);
  samples.push(rssBytes(pid));
  samples.sort((a, b) => a - b);
  return { result, rss: samples[Math.floor(samples.length / 2)] ?? 0 };
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;

/**
 * The legitimate requests `--served` adds to the normal traffic: one each of the endpoints and body
 * paths the hostile kinds reach, within every limit (each answered 200).
 */
function servedRequests(url: string, key: string): (() => Promise<number>)[] {
  const auth = { authorization: `Bearer ${key}` };
  const status = async (r: Response) => {
    await r.arrayBuffer();
    return r.status;
  };
  const png = new PNG({ width: 512, height: 512 });
  for (let i = 0; i < png.data.length; i++) png.data[i] = (i * 7) & 0xff;
  const image = new Uint8Array(PNG.sync.write(png));
  const words = ["the", "gateway", "bills", "every", "answer", "once", "and", "exactly"];
  const prose = Array.from({ length: 16_000 }, (_, i) => words[(i * 5) % words.length]).join(" ");
  const chat = (content: string) =>
    JSON.stringify({ model: "modelx-5.5", max_tokens: 5, messages: [{ role: "user", content }] });
  const json = { ...auth, "content-type": "application/json" };
  const zipped = new Uint8Array(gzipSync(chat("Summarise this in one line.")));
  return [
    () => {
      const form = new FormData();
      form.append("model", "modelx-image-2");
      form.append("prompt", "hat");
      form.append("size", "256x256");
      form.append("quality", "low");
      form.append("image", new Blob([image], { type: "image/png" }), "a.png");
      return fetch(`${url}/v1/images/edits`, { method: "POST", headers: auth, body: form }).then(status);
    },
    () =>
      fetch(`${url}/v1/chat/completions`, { method: "POST", headers: json, body: chat(prose) }).then(status),
    () =>
      fetch(`${url}/v1/chat/completions`, {
        method: "POST",
        headers: { ...json, "content-encoding": "gzip" },
        body: zipped,
      }).then(status),
  ];
}

/** The normal traffic's chat (and the warm-up's). */
const NORMAL_CHAT = JSON.stringify({
  model: "modelx-5.5",
  max_tokens: 16,
  messages: [{ role: "user", content: "Tell me a story." }],
});

/** `--served`'s requests (sent by normalTraffic), and how many of them were not answered 200. */
const served = { send: [] as (() => Promise<number>)[], sent: 0, failed: 0 };

/**
 * Sends normal chats at `rate` per second for `seconds`; their latencies in ms. With `--served`,
 * every `servedEvery` chats (once a second by default) also sends one of each of `served.send`
 * (their latencies are not counted).
 */
async function normalTraffic(
  url: string,
  key: string,
  seconds: number,
  rate: number,
  servedEvery = rate,
): Promise<{ latencies: number[]; errors: number }> {
  const latencies: number[] = [];
  let errors = 0;
  const pending: Promise<void>[] = [];
  const started = performance.now();
  for (let i = 0; i < seconds * rate; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await Bun.sleep(wait);
    if (i % servedEvery === 0)
      for (const send of served.send) {
        served.sent++;
        pending.push(
          send().then(
            (code) => {
              if (code !== 200) served.failed++;
            },
            () => {
              served.failed++;
            },
          ),
        );
      }
    const sent = performance.now();
    pending.push(
      fetch(`${url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: NORMAL_CHAT,
      })
        .then(async (r) => {
          await r.arrayBuffer();
          if (r.status === 200) latencies.push(performance.now() - sent);
          else errors++;
        })
        .catch(() => {
          errors++;
        }),
    );
  }
  await Promise.all(pending);
  return { latencies: latencies.sort((a, b) => a - b), errors };
}

/** Chats sent `connections` at a time until `count` have been answered (any status: the warm-up's). */
async function closedLoopChats(url: string, key: string, count: number, connections: number): Promise<void> {
  const init = {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: NORMAL_CHAT,
  };
  let sent = 0;
  const connection = async () => {
    while (sent++ < count) await (await fetch(`${url}/v1/chat/completions`, init)).arrayBuffer();
  };
  await Promise.all(Array.from({ length: connections }, connection));
}

type Hostile = () => Promise<number>;

/** `n` letters in one piece that never repeats a 4 KiB chunk (the tokenizer's memo has nothing to reuse). */
function unrepeatedLetters(n: number, seed0: number): string {
  let seed = seed0 + 1;
  const parts: string[] = [];
  let length = 0;
  while (length < n) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    const part = `${"a".repeat(1 + (seed >>> 28))}b`;
    parts.push(part);
    length += part.length;
  }
  return parts.join("").slice(0, n);
}

/** The kinds to send: those `--only` names (by prefix), else the soak's mix. */
function chosenKinds(url: string, key: string): ReturnType<typeof hostileKinds> {
  const kinds = hostileKinds(url, key);
  if (values.only === undefined) return kinds.filter((k) => k.share > 0);
  return kinds
    .filter((k) => k.name.startsWith(values.only ?? ""))
    .map((k) => ({ ...k, share: k.share || 1 }));
}

function hostileKinds(url: string, key: string): { name: string; share: number; send: Hostile }[] {
  const auth = { authorization: `Bearer ${key}` };
  const chat = (content: string, headers: Record<string, string> = {}, body?: Uint8Array) =>
    fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json", ...headers },
      body:
        body ?? JSON.stringify({ model: "modelx-5.5", max_tokens: 5, messages: [{ role: "user", content }] }),
    }).then(async (r) => {
      await r.arrayBuffer();
      return r.status;
    });
  const png = new PNG({ width: 4096, height: 4096 });
  png.data.fill(90);
  const big = new Uint8Array(PNG.sync.write(png, { colorType: 6 }));
  const bomb = new Uint8Array(gzipSync(Buffer.alloc(64 * 1024 * 1024, 0x61)));
  const forged = bomb.slice();
  new DataView(forged.buffer).setUint32(forged.byteLength - 4, 100, true);
  let letters = 0;
  return [
    {
      name: "unbroken prompt (20k-200k letters)",
      share: 0.4,
      send: () => chat("a".repeat(20_000 + ((letters++ * 37_000) % 180_000))),
    },
    {
      name: "4096x4096 edit (over the simulator's budget)",
      share: 0.2,
      send: () => {
        const form = new FormData();
        form.append("model", "modelx-image-2");
        form.append("prompt", "hat");
        form.append("image", new Blob([big]), "a.png");
        return fetch(`${url}/v1/images/edits`, { method: "POST", headers: auth, body: form }).then(
          async (r) => {
            await r.arrayBuffer();
            return r.status;
          },
        );
      },
    },
    {
      name: "body declared over the cap (64 MiB, never sent)",
      share: 0.3,
      send: async () => {
        const { connect } = await import("node:net");
        const { port, hostname } = new URL(url);
        return new Promise<number>((resolveStatus) => {
          const socket = connect(Number(port), hostname, () =>
            socket.write(
              `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${64 * 1024 * 1024}\r\n\r\n{`,
            ),
          );
          let head = "";
          socket.on("data", (d: Buffer) => {
            head += d.toString("latin1");
            socket.destroy();
            resolveStatus(Number(/^HTTP\/1\.1 (\d+)/.exec(head)?.[1] ?? 0));
          });
          socket.on("error", () => resolveStatus(0));
        });
      },
    },
    {
      name: "gzip bomb (64 KB → 64 MiB)",
      share: 0.1,
      send: () => chat("", { "content-encoding": "gzip" }, bomb),
    },
    // Not in the soak's mix (share 0); sent with --only or --cpu: the worst cases of two kinds above.
    {
      name: "unrepeated letters (20k-200k, runs of a of seeded lengths: no 4 KiB chunk repeats)",
      share: 0,
      send: () => chat(unrepeatedLetters(20_000 + ((letters * 37_000) % 180_000), letters++)),
    },
    {
      name: "forged gzip bomb (its trailer claims 100 bytes)",
      share: 0,
      send: () => chat("", { "content-encoding": "gzip" }, forged),
    },
  ];
}

/** Sends `count` requests spread over `seconds`, at most 8 at a time; counts by kind and status. */
async function hostileTraffic(
  kinds: ReturnType<typeof hostileKinds>,
  count: number,
  seconds: number,
): Promise<Record<string, Record<number, number>>> {
  const plan: (typeof kinds)[number][] = [];
  const total = kinds.reduce((sum, k) => sum + k.share, 0);
  for (const kind of kinds)
    for (let i = 0; i < Math.round((count * kind.share) / total); i++) plan.push(kind);
  for (let i = plan.length - 1; i > 0; i--) {
    const j = (i * 7919) % (i + 1);
    [plan[i], plan[j]] = [plan[j] as (typeof kinds)[number], plan[i] as (typeof kinds)[number]];
  }
  const counts: Record<string, Record<number, number>> = {};
  const started = performance.now();
  let next = 0;
  const worker = async () => {
    for (let at = next++; at < plan.length; at = next++) {
      const due = started + (at * seconds * 1000) / plan.length;
      const wait = due - performance.now();
      if (wait > 0) await Bun.sleep(wait);
      const kind = plan[at];
      if (kind === undefined) continue;
      const status = await kind.send().catch(() => 0);
      counts[kind.name] ??= {};
      const byStatus = counts[kind.name] ?? {};
      byStatus[status] = (byStatus[status] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return counts;
}

/**
 * The hostile sender: a process of its own, so building and sending the hostile requests (200 KB
 * prompts, 4096x4096 PNG forms, 64 KB bombs) never delays the normal traffic's client, whose
 * latencies are the measure. Warms up (one of each kind: the first loads the gateway's image
 * modules and starts its threads), says `ready`, waits for `go` on stdin, sends, prints the counts.
 */
async function sender(url: string, key: string): Promise<void> {
  const kinds = chosenKinds(url, key);
  for (const kind of kinds) await kind.send();
  console.log("ready");
  let round = 0;
  for await (const line of console) {
    if (line.trim() !== "go") continue;
    const seconds = PHASE_SECONDS / ROUNDS;
    console.log(JSON.stringify(await hostileTraffic(kinds, HOSTILE / ROUNDS, seconds)));
    if (++round === ROUNDS) break;
  }
}

/** Starts the hostile sender and waits until it is ready; `go()` starts it and resolves with its counts. */
async function startSender(url: string, key: string) {
  const args = [
    "--sender",
    "--url",
    url,
    "--key",
    key,
    "--seconds",
    String(PHASE_SECONDS),
    "--rounds",
    String(ROUNDS),
  ];
  args.push("--hostile", String(HOSTILE), ...(values.only === undefined ? [] : ["--only", values.only]));
  const child = Bun.spawn([process.execPath, import.meta.path, ...args], {
    stdin: "pipe",
    stdout: "pipe",
    stderr: "inherit",
  });
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  const nextLine = async (): Promise<string> => {
    for (;;) {
      const at = text.indexOf("\n");
      if (at >= 0) {
        const line = text.slice(0, at);
        text = text.slice(at + 1);
        return line;
      }
      const { value, done } = await lines.read();
      if (done) throw new Error("the hostile sender exited");
      text += value;
    }
  };
  if ((await nextLine()) !== "ready") throw new Error("the hostile sender did not start");
  return {
    /** Sends one round's hostile requests; resolves with their counts by kind and status. */
    async go(): Promise<Record<string, Record<number, number>>> {
      child.stdin.write("go\n");
      await child.stdin.flush();
      return JSON.parse(await nextLine()) as Record<string, Record<number, number>>;
    },
    async stop(): Promise<void> {
      child.stdin.end();
      await child.exited;
    },
  };
}

async function soak(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "modelgate-hostile-"));
  try {
    const bin = await binary(dir);
    const gw = await start(bin, dir);
    const hostileSender = await startSender(gw.url, gw.key);
    if (values.served) served.send = servedRequests(gw.url, gw.key);
    // Warm-up, first to a steady state: the JIT tiers the chat path up over its first ~15,000
    // requests, and the SQLite page caches and the allocator's arenas fill meanwhile. Started
    // after 500 chats, a run without a single hostile request grew 7-9 % (anonymous memory after
    // a full collection +6 to +8 MB, the JS heap flat): growth the soak would have put on the
    // hostile requests. Then 10 s at the normal rate, so the closed loop's CPU and garbage are not
    // charged to the first clean window; with `--served`, the served requests go ten times a
    // second there, so their paths are compiled before the start is read, as on a gateway that
    // has been serving them.
    await closedLoopChats(gw.url, gw.key, WARMUP_REQUESTS, 8);
    await normalTraffic(gw.url, gw.key, 10, NORMAL_RATE, Math.max(1, Math.round(NORMAL_RATE / 10)));
    // Then 10 s at the normal rate, so the start is read on a steady gateway and not while the
    // heavier warm-up's garbage is still being collected (it moved the start by ~10 MB run to run).
    if (values.served) await normalTraffic(gw.url, gw.key, 10, NORMAL_RATE);
    const rssBefore = rssBytes(gw.proc.pid);
    const loadBefore = loadAverage();
    const clean = { latencies: [] as number[], errors: 0 };
    const mixed = { latencies: [] as number[], errors: 0 };
    const hostile: Record<string, Record<number, number>> = {};
    let cpuClean = 0;
    let cpuMixed = 0;
    let rssStart = 0; // the median through the first clean window
    let partsStart = "";
    let peak = 0;
    const window = PHASE_SECONDS / ROUNDS;
    for (let round = 0; round < ROUNDS; round++) {
      let cpu = cpuSeconds(gw.proc.pid);
      const { result: calm, rss } = await medianRss(
        gw.proc.pid,
        normalTraffic(gw.url, gw.key, window, NORMAL_RATE),
      );
      cpuClean += cpuSeconds(gw.proc.pid) - cpu;
      if (round === 0) {
        rssStart = rss;
        partsStart = rssParts(gw.proc.pid);
      }
      peak = Math.max(peak, rssBytes(gw.proc.pid));
      const sampler = setInterval(() => {
        peak = Math.max(peak, rssBytes(gw.proc.pid));
      }, 100);
      cpu = cpuSeconds(gw.proc.pid);
      const [busy, counts] = await Promise.all([
        normalTraffic(gw.url, gw.key, window, NORMAL_RATE),
        hostileSender.go(),
      ]);
      cpuMixed += cpuSeconds(gw.proc.pid) - cpu;
      clearInterval(sampler);
      for (const [into, from] of [
        [clean, calm],
        [mixed, busy],
      ] as const) {
        into.latencies.push(...from.latencies);
        into.errors += from.errors;
      }
      for (const [kind, byStatus] of Object.entries(counts)) {
        const total = hostile[kind] ?? {};
        for (const [status, n] of Object.entries(byStatus))
          total[Number(status)] = (total[Number(status)] ?? 0) + n;
        hostile[kind] = total;
      }
    }
    await hostileSender.stop();
    clean.latencies.sort((a, b) => a - b);
    mixed.latencies.sort((a, b) => a - b);
    const loadAfter = loadAverage();
    // The gateway settles under normal traffic: RSS through each 5 s of it, the median (the garbage
    // of the hostile phase goes at the heaps' next collections, which allocation and JSC's timers bring).
    const settled: number[] = [];
    for (let i = 0; i < SETTLE_STEPS; i++)
      settled.push((await medianRss(gw.proc.pid, normalTraffic(gw.url, gw.key, 5, NORMAL_RATE))).rss);
    const p99 = (l: number[]) => percentile(l, 0.99).toFixed(1);
    const p50 = (l: number[]) => percentile(l, 0.5).toFixed(1);
    console.log(
      `normal chats at ${NORMAL_RATE}/s, ${PHASE_SECONDS} s clean and ${PHASE_SECONDS} s with ${HOSTILE} hostile requests, in ${ROUNDS} alternating rounds`,
    );
    console.log(
      `clean:   ${clean.latencies.length} ok, ${clean.errors} errors, p50 ${p50(clean.latencies)} ms, p99 ${p99(clean.latencies)} ms`,
    );
    console.log(
      `hostile: ${mixed.latencies.length} ok, ${mixed.errors} errors, p50 ${p50(mixed.latencies)} ms, p99 ${p99(mixed.latencies)} ms`,
    );
    console.log(
      `p99 ratio ${(percentile(mixed.latencies, 0.99) / percentile(clean.latencies, 0.99)).toFixed(2)}`,
    );
    console.log(`hostile requests by kind and status: ${JSON.stringify(hostile)}`);
    if (values.served)
      console.log(
        `served requests beside the chats (an edit, a ~100 KB prompt, a gzip body, once a second each): ${served.sent} sent, ${served.failed} not answered 200`,
      );
    // The gateway's CPU (all its threads) in the clean and hostile windows: the hostile windows'
    // excess, per hostile request, is what a hostile request costs, a figure other load barely moves.
    const sent = Object.values(hostile).reduce(
      (sum, byStatus) => sum + Object.values(byStatus).reduce((a, b) => a + b, 0),
      0,
    );
    console.log(
      `gateway CPU: clean ${cpuClean.toFixed(2)} s, hostile phase ${cpuMixed.toFixed(2)} s, ${(((cpuMixed - cpuClean) / Math.max(sent, 1)) * 1000).toFixed(1)} ms per hostile request`,
    );
    console.log(`load average: before ${loadBefore}, after the hostile phase ${loadAfter}`);
    const growth = (rss: number) => `${(((rss - rssStart) / rssStart) * 100).toFixed(0)} %`;
    console.log(
      `RSS before the first clean window ${(rssBefore / 2 ** 20).toFixed(0)} MB; medians of 250 ms samples: through the first clean window (start) ${(rssStart / 2 ** 20).toFixed(0)} MB, peak ${(peak / 2 ** 20).toFixed(0)} MB; through each 5 s after the last hostile window: ` +
        settled
          .map((rss, i) => `${5 * i}–${5 * (i + 1)} s ${(rss / 2 ** 20).toFixed(0)} MB (${growth(rss)})`)
          .join(", "),
    );
    console.log(`RSS at the start: ${partsStart}; at the end: ${rssParts(gw.proc.pid)}`);
    gw.proc.kill("SIGTERM");
    await gw.proc.exited;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** CPU seconds of each of the gateway's threads, by thread id (the main thread's id is the pid). */
function threadCpu(pid: number): Map<string, { name: string; seconds: number }> {
  const threads = new Map<string, { name: string; seconds: number }>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").trim();
      const ns = Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
      threads.set(tid, { name: tid === String(pid) ? "main" : name, seconds: ns / 1e9 });
    } catch {
      // The thread ended between listing and reading.
    }
  }
  return threads;
}

/**
 * `--cpu N`: the gateway's CPU per hostile request of each kind (all of them, or --only's), N
 * sent one at a time after two warm-up ones, by thread: "Worker" is the token thread (and the
 * simulator's image thread), "Bun Pool" zlib's. Alone on the gateway, so load changes little.
 */
async function cpuPerKind(count: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "modelgate-hostile-"));
  try {
    const gw = await start(await binary(dir), dir);
    const kinds = hostileKinds(gw.url, gw.key).filter(
      (k) => values.only === undefined || k.name.startsWith(values.only),
    );
    console.log(`gateway CPU per request, ${count} of each kind; load ${loadAverage()}`);
    for (const kind of kinds) {
      for (let i = 0; i < 2; i++) await kind.send();
      const before = threadCpu(gw.proc.pid);
      const statuses: Record<number, number> = {};
      for (let i = 0; i < count; i++) {
        const status = await kind.send();
        statuses[status] = (statuses[status] ?? 0) + 1;
      }
      const byName = new Map<string, number>();
      for (const [tid, { name, seconds }] of threadCpu(gw.proc.pid)) {
        const group = name.replace(/ \d+$/, "");
        byName.set(group, (byName.get(group) ?? 0) + seconds - (before.get(tid)?.seconds ?? 0));
      }
      const ms = (seconds: number) => ((seconds / count) * 1000).toFixed(2);
      const total = [...byName.values()].reduce((a, b) => a + b, 0);
      const parts = [...byName]
        .filter(([, seconds]) => seconds / count >= 0.0001)
        .sort((a, b) => b[1] - a[1])
        .map(([name, seconds]) => `${name} ${ms(seconds)}`);
      console.log(`${kind.name} ${JSON.stringify(statuses)}: ${ms(total)} ms (${parts.join(", ")})`);
    }
    console.log(`load ${loadAverage()}`);
    gw.proc.kill("SIGTERM");
    await gw.proc.exited;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (values.sender) await sender(values.url ?? "", values.key ?? "");
else if (values.cpu !== undefined) await cpuPerKind(Number(values.cpu));
else await soak();
