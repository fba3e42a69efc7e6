// The benchmark kit's smoke mode inside the suite: every target (direct, nginx, the minimal Bun
// proxy, modelgate, Portkey, and modelgate with 1 and 2 worker processes on both cores) is started
// on 127.0.0.1 and answers one non-stream and one stream request through the bench upstream, and
// wrk drives each for a second; every client path (Chat, Responses and Messages clients on their own
// protocol's channel, and the two translated pairs) answers the fixed text and streams to its
// protocol's last event. The test suite installs nothing: the smoke runs here only when the
// benchmark's tools (nginx, wrk, taskset, node, the peers in bench/peers) are already present, and
// is skipped with a note otherwise; `npm run bench -- --smoke` installs them and runs it.
import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import * as v from "valibot";
import { PATH_NAMES } from "../../bench/paths.ts";
import { TARGET_NAMES } from "../../bench/targets.ts";
import { missingTools } from "../../bench/tools.ts";
import { binary } from "../helpers/gateway.ts";

const ROOT = resolve(import.meta.dir, "../..");

const SummarySchema = v.array(
  v.object({ name: v.string(), status: v.string(), streamEvents: v.optional(v.number()) }),
);

const missing = missingTools();
if (missing.length > 0)
  console.warn(
    `bench smoke skipped: ${missing.join(", ")} not installed (the test suite installs nothing; \`npm run bench -- --smoke\` installs them and runs it)`,
  );

describe("bench --smoke", () => {
  test.skipIf(missing.length > 0)(
    "starts every target and each answers through the fixed upstream",
    async () => {
      const out = mkdtempSync(join(tmpdir(), "modelgate-bench-smoke-"));
      try {
        const proc = Bun.spawn(
          [process.execPath, join(ROOT, "bench/run.ts"), "--smoke", "--bin", binary(), "--out", out],
          {
            cwd: ROOT,
            // The suite's own variable is not the gateway's: serve refuses an unknown MODELGATE_*.
            env: { ...process.env, MODELGATE_TEST_BIN: undefined },
            stdin: "ignore",
            stdout: "pipe",
            stderr: "pipe",
          },
        );
        const timer = setTimeout(() => proc.kill("SIGKILL"), 590_000);
        const [stdout, stderr, code] = await Promise.all([
          new Response(proc.stdout).text(),
          new Response(proc.stderr).text(),
          proc.exited,
        ]);
        clearTimeout(timer);
        const line = stdout.split("\n").find((l) => l.startsWith("BENCH_SUMMARY "));
        if (line === undefined) {
          throw new Error(
            `the benchmark smoke run printed no summary (exit ${code}); its output:\n${stderr}\n${stdout}`,
          );
        }
        const summary = v.parse(SummarySchema, JSON.parse(line.slice("BENCH_SUMMARY ".length)));
        expect(summary.map((t) => t.name)).toEqual([...TARGET_NAMES]);
        // Every target answered through the upstream: 200, the fixed answer, and a full stream.
        expect(summary.map((t) => [t.name, t.status])).toEqual(summary.map((t) => [t.name, "ok"]));
        // The plain proxies relay the upstream's 64 events exactly; gateways may add their own.
        for (const target of summary) {
          if (["direct", "nginx", "bun-proxy"].includes(target.name)) expect(target.streamEvents).toBe(64);
          else expect(target.streamEvents ?? 0).toBeGreaterThanOrEqual(64);
        }
        // Every client path, native and translated, answered through its channel kind.
        const pathsLine = stdout.split("\n").find((l) => l.startsWith("BENCH_PATHS "));
        const paths = v.parse(
          v.array(v.object({ name: v.string(), status: v.string() })),
          JSON.parse(pathsLine?.slice("BENCH_PATHS ".length) ?? "[]"),
        );
        expect(paths).toEqual(PATH_NAMES.map((name) => ({ name, status: "ok" })));
        expect(code).toBe(0);

        const report = readFileSync(join(out, "smoke-latest.md"), "utf8");
        expect(report).toContain("# modelgate benchmark (smoke)");
        const json = JSON.parse(readFileSync(join(out, "smoke-latest.json"), "utf8")) as {
          results: unknown[];
        };
        expect(json.results).toHaveLength(7);
      } finally {
        rmSync(out, { recursive: true, force: true });
      }
    },
    600_000,
  );
});
