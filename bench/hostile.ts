// The hostile soak (issue 25's acceptance): normal chat traffic at a fixed rate, first alone (the
// clean phase), then with 1,000 hostile requests of the kinds that used to stall the gateway mixed
// in (long unbroken prompts, image uploads over the simulator's budget, bodies declared over the
// cap, gzip bombs). Reports the normal traffic's p99 in both phases and the gateway's RSS at the
// start, its peak, and after the hostile phase. `bun bench/hostile.ts [--bin PATH] [--seconds N]`
// (N: each phase's length, default 20; the whole run stays under a minute).
import { mkdtempSync, rmSync } from "node:fs";
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
  },
});
const PHASE_SECONDS = Number(values.seconds ?? 20);
const NORMAL_RATE = Number(values.rate ?? 50);
const HOSTILE = Number(values.hostile ?? 1000);

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

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;

/** Sends normal chats at `rate` per second for `seconds`; their latencies in ms. */
async function normalTraffic(
  url: string,
  key: string,
  seconds: number,
  rate: number,
): Promise<{ latencies: number[]; errors: number }> {
  const body = JSON.stringify({
    model: "modelx-5.5",
    max_tokens: 16,
    messages: [{ role: "user", content: "Tell me a story." }],
  });
  const latencies: number[] = [];
  let errors = 0;
  const pending: Promise<void>[] = [];
  const started = performance.now();
  for (let i = 0; i < seconds * rate; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await Bun.sleep(wait);
    const sent = performance.now();
    pending.push(
      fetch(`${url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body,
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

type Hostile = () => Promise<number>;

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
  ];
}

/** Sends HOSTILE requests spread over `seconds`, at most 8 at a time; counts by kind and status. */
async function hostileTraffic(
  kinds: ReturnType<typeof hostileKinds>,
  seconds: number,
): Promise<Record<string, Record<number, number>>> {
  const plan: (typeof kinds)[number][] = [];
  const total = kinds.reduce((sum, k) => sum + k.share, 0);
  for (const kind of kinds)
    for (let i = 0; i < Math.round((HOSTILE * kind.share) / total); i++) plan.push(kind);
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

const dir = mkdtempSync(join(tmpdir(), "modelgate-hostile-"));
try {
  const bin = await binary(dir);
  const gw = await start(bin, dir);
  const mb = () => (rssBytes(gw.proc.pid) / 2 ** 20).toFixed(0);
  // Made before the clean phase: building them would stall this process's normal traffic.
  const kinds = hostileKinds(gw.url, gw.key).filter(
    (k) => values.only === undefined || k.name.startsWith(values.only),
  );
  // Warm-up: one of each hostile kind (the first loads the image modules and starts the threads,
  // a one-time cost), then normal traffic.
  for (const kind of kinds) await kind.send();
  await normalTraffic(gw.url, gw.key, 2, NORMAL_RATE);
  const rssStart = rssBytes(gw.proc.pid);
  const loadBefore = loadAverage();
  const cpuStart = cpuSeconds(gw.proc.pid);
  const clean = await normalTraffic(gw.url, gw.key, PHASE_SECONDS, NORMAL_RATE);
  const cpuClean = cpuSeconds(gw.proc.pid) - cpuStart;
  let peak = rssBytes(gw.proc.pid);
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssBytes(gw.proc.pid));
  }, 100);
  const [mixed, hostile] = await Promise.all([
    normalTraffic(gw.url, gw.key, PHASE_SECONDS, NORMAL_RATE),
    hostileTraffic(kinds, PHASE_SECONDS),
  ]);
  clearInterval(sampler);
  const cpuMixed = cpuSeconds(gw.proc.pid) - cpuStart - cpuClean;
  const loadAfter = loadAverage();
  await normalTraffic(gw.url, gw.key, 5, NORMAL_RATE); // the gateway settles under normal traffic
  const rssEnd = rssBytes(gw.proc.pid);
  const p99 = (l: number[]) => percentile(l, 0.99).toFixed(1);
  const p50 = (l: number[]) => percentile(l, 0.5).toFixed(1);
  console.log(`normal chats at ${NORMAL_RATE}/s, ${PHASE_SECONDS} s a phase`);
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
  // The gateway's CPU (all its threads) in each phase: the hostile phase's excess over the clean
  // one, per hostile request, is what a hostile request costs, a figure other load barely moves.
  const sent = Object.values(hostile).reduce(
    (sum, byStatus) => sum + Object.values(byStatus).reduce((a, b) => a + b, 0),
    0,
  );
  console.log(
    `gateway CPU: clean ${cpuClean.toFixed(2)} s, hostile phase ${cpuMixed.toFixed(2)} s, ${(((cpuMixed - cpuClean) / Math.max(sent, 1)) * 1000).toFixed(1)} ms per hostile request`,
  );
  console.log(`load average: before ${loadBefore}, after the hostile phase ${loadAfter}`);
  console.log(
    `RSS start ${(rssStart / 2 ** 20).toFixed(0)} MB, peak ${(peak / 2 ** 20).toFixed(0)} MB, end ${mb()} MB (${(((rssEnd - rssStart) / rssStart) * 100).toFixed(0)} %)`,
  );
  gw.proc.kill("SIGTERM");
  await gw.proc.exited;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
