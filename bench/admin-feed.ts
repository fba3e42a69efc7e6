// Benchmark (not a test): does a stalled /admin/v1/events reader slow the gateway? Counts the
// proxied requests completed in a fixed window without a reader, with a reader that never reads
// (a bash process holding the TCP connection open), and without again; prints the figures and the
// ratio. The gateway drops a reader whose queue fills, and publishing never waits for it.
//
//   ./node_modules/.bin/bun bench/admin-feed.ts [--seconds 5] [--concurrency 16] [--bin PATH]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import * as v from "valibot";
import { writeVocabulary } from "../scripts/vocabulary.ts";
import { startGateway } from "../test/helpers/gateway.ts";

const Options = v.object({
  seconds: v.pipe(v.string(), v.transform(Number), v.number(), v.integer(), v.minValue(1)),
  concurrency: v.pipe(v.string(), v.transform(Number), v.number(), v.integer(), v.minValue(1)),
  bin: v.optional(v.string()),
});

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "5" },
    concurrency: { type: "string", default: "16" },
    bin: { type: "string" },
  },
});
const options = v.parse(Options, values);
const root = resolve(import.meta.dir, "..");
const work = mkdtempSync(join(tmpdir(), "modelgate-bench-feed-"));

function build(): string {
  if (options.bin) return resolve(options.bin);
  const outfile = join(work, "modelgate");
  writeVocabulary();
  const made = Bun.spawnSync(
    [process.execPath, "build", "--compile", join(root, "src/main.ts"), "--outfile", outfile],
    { cwd: root, stdout: "pipe", stderr: "pipe" },
  );
  if (made.exitCode !== 0) throw new Error(`build failed:\n${made.stderr.toString()}`);
  return outfile;
}

/** Closed-loop clients for `seconds`: the number of 200 answers. */
async function window(url: string, key: string): Promise<{ ok: number; failed: number }> {
  const until = Date.now() + options.seconds * 1000;
  let ok = 0;
  let failed = 0;
  const body = JSON.stringify({ model: "modelx-5.5", messages: [{ role: "user", content: "hello" }] });
  const client = async () => {
    while (Date.now() < until) {
      const response = await fetch(`${url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body,
      });
      await response.arrayBuffer();
      if (response.status === 200) ok++;
      else failed++;
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, client));
  return { ok, failed };
}

/** A reader that subscribes to the event feed and never reads a byte of it. */
function stalledReader(url: string, token: string) {
  const { hostname, port } = new URL(url);
  const request = `GET /admin/v1/events HTTP/1.1\\r\\nHost: ${hostname}\\r\\nAuthorization: Bearer ${token}\\r\\n\\r\\n`;
  const script = `exec 3<>/dev/tcp/${hostname}/${port}; printf '${request}' >&3; exec sleep 3600`;
  return Bun.spawn(["bash", "-c", script], { stdin: "ignore", stdout: "ignore", stderr: "inherit" });
}

async function main(): Promise<void> {
  process.env.MODELGATE_TEST_BIN = build();
  const gw = await startGateway({ dir: work });
  const token = /^ {4}(mga-[A-Za-z0-9_-]+)$/m.exec(gw.logs())?.[1];
  if (!gw.key || !token) throw new Error(`no bootstrap key or admin token:\n${gw.logs()}`);
  try {
    // Enough balance that billing never refuses during the run.
    await fetch(`${gw.url}/admin/v1/accounts/default/credit`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ amount_usd: "100000", note: "admin-feed benchmark" }),
    });
    await window(gw.url, gw.key); // warm-up
    const before = await window(gw.url, gw.key);
    const reader = stalledReader(gw.url, token);
    await Bun.sleep(300);
    const stalled = await window(gw.url, gw.key);
    const dropped = gw.logs().includes("admin event reader too slow; dropped");
    reader.kill();
    await reader.exited;
    const after = await window(gw.url, gw.key);
    const baseline = (before.ok + after.ok) / 2;
    console.log(`admin event feed, ${options.seconds} s windows, ${options.concurrency} clients`);
    console.log(`  without reader (before):  ${before.ok} requests (${before.failed} failed)`);
    console.log(`  with a stalled reader:    ${stalled.ok} requests (${stalled.failed} failed)`);
    console.log(`  without reader (after):   ${after.ok} requests (${after.failed} failed)`);
    console.log(`  ratio stalled / without:  ${(stalled.ok / baseline).toFixed(3)}`);
    console.log(
      `  stalled reader dropped by the gateway: ${dropped ? "yes" : "no (its buffers never filled)"}`,
    );
  } finally {
    await gw.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
