// Benchmark (not a test): the gateway's peak memory while it receives image-edit uploads.
// Builds the executable, starts it on loopback, and reads its peak RSS (VmHWM, /proc) after
// a warm-up, one 19 MB upload, two concurrent 19 MB uploads, and four concurrent ones. Each
// upload is fully received and parsed (busboy, per-file cap) and then refused with 400 for a
// mismatched mask, so the figure is the cost of receiving, not of decoding.
// Usage: ./node_modules/.bin/bun bench/upload-memory.ts [--json]
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { PNG } from "pngjs";
import { writeVocabulary } from "../scripts/vocabulary.ts";

const MB = 1024 * 1024;
const FILE_BYTES = 19 * MB;
const root = resolve(import.meta.dir, "..");

function png(width: number, height: number): Uint8Array {
  const image = new PNG({ width, height });
  image.data.fill(255);
  return new Uint8Array(PNG.sync.write(image, { colorType: 6 }));
}

/** A 19 MB file that starts as a valid 8x8 PNG: recognised by its bytes, padded to size. */
const upload = new Uint8Array(FILE_BYTES);
upload.set(png(8, 8));
const mask = png(4, 4);

function peakRssMb(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? 0);
  return { rss: kb("VmRSS") / 1024, peak: kb("VmHWM") / 1024 };
}

async function start(
  dir: string,
): Promise<{ proc: Bun.Subprocess<"ignore", "ignore", "pipe">; url: string; key: string }> {
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
  const proc = Bun.spawn([bin, "serve", "--listen", "127.0.0.1:0", "--db", `sqlite://${join(dir, "db")}`], {
    cwd: dir,
    stdin: "ignore",
    stdout: "ignore",
    stderr: "pipe",
  });
  let text = "";
  const reader = proc.stderr.getReader();
  while (!/"msg":"modelgate listening"/.test(text)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`gateway exited:\n${text}`);
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  const url = /"url":"([^"]+)"/.exec(text)?.[1] ?? "";
  const key = /^\s{4}(sk-[A-Za-z0-9_-]+)$/m.exec(text)?.[1] ?? "";
  return { proc, url, key };
}

async function send(url: string, key: string, bytes: Uint8Array): Promise<number> {
  const form = new FormData();
  form.append("model", "modelx-image-2");
  form.append("prompt", "benchmark upload");
  form.append("image", new Blob([bytes]), "big.png");
  form.append("mask", new Blob([mask]), "mask.png");
  const response = await fetch(`${url}/v1/images/edits`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}` },
    body: form,
  });
  await response.arrayBuffer();
  return response.status;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "modelgate-upload-bench-"));
  const { proc, url, key } = await start(dir);
  const rows: { step: string; inFlight: number; statuses: number[]; rssMb: number; peakMb: number }[] = [];
  const measure = (step: string, inFlight: number, statuses: number[]) => {
    Bun.gc(true);
    const m = peakRssMb(proc.pid);
    rows.push({ step, inFlight, statuses, rssMb: Math.round(m.rss), peakMb: Math.round(m.peak) });
  };
  try {
    measure("warm-up (one small upload)", 1, [await send(url, key, png(8, 8))]);
    measure("one 19 MB upload", 1, [await send(url, key, upload)]);
    for (const inFlight of [2, 4]) {
      const statuses = await Promise.all(Array.from({ length: inFlight }, () => send(url, key, upload)));
      measure(`${inFlight} concurrent 19 MB uploads`, inFlight, statuses);
    }
  } finally {
    proc.kill("SIGTERM");
    await proc.exited;
    rmSync(dir, { recursive: true, force: true });
  }
  if (process.argv.includes("--json")) {
    console.log(JSON.stringify({ fileMb: FILE_BYTES / MB, rows }, null, 2));
    return;
  }
  console.log(`# Gateway peak RSS while receiving ${FILE_BYTES / MB} MB image uploads\n`);
  console.log("| step | uploads in flight | statuses | RSS after (MB) | peak RSS so far (MB) |");
  console.log("|---|---|---|---|---|");
  for (const r of rows)
    console.log(`| ${r.step} | ${r.inFlight} | ${r.statuses.join(",")} | ${r.rssMb} | ${r.peakMb} |`);
  const base = rows[0]?.peakMb ?? 0;
  const two = rows.find((r) => r.inFlight === 2)?.peakMb ?? 0;
  console.log(
    `\nPeak growth with two uploads in flight: ${two - base} MB for ${2 * (FILE_BYTES / MB)} MB of file bytes.`,
  );
}

await main();
