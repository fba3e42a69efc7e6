// The bench's field sections at small sizes, through the bench command: direct and modelgate each
// get latency at concurrency 1, a concurrency sweep read at every p99 bound, the sustained sweep
// behind the 20 ms upstream (whose p50 proves the delay reached the upstream through modelgate),
// frame timing, concurrent-stream steps and memory idle / steady / recovered; the report prints the
// section. Structure only: the figures of a small run on a shared machine mean nothing.
// It takes about 50 s and needs wrk, so the test suite runs it only when asked
// (MODELGATE_BENCH_TESTS=1); the pure parts are unit-tested in test/unit/bench-field.test.ts.
import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import * as v from "valibot";
import { FRONTIER_BOUNDS_US } from "../../bench/sweep.ts";
import { binary } from "../helpers/gateway.ts";

const ROOT = resolve(import.meta.dir, "../..");

const Rungs = v.array(v.object({ concurrency: v.number(), requests: v.number(), p50Us: v.number() }));
const FieldSchema = v.object({
  latency: v.object({ requests: v.pipe(v.number(), v.minValue(1)), p99Us: v.number() }),
  sweep: v.object({ rungs: Rungs, frontier: v.array(v.object({ boundUs: v.number(), rps: v.number() })) }),
  sustained: v.object({ delayMs: v.literal(20), rungs: Rungs }),
  frames: v.object({ streams: v.number(), failed: v.number(), framesPerStream: v.number() }),
  stalls: v.object({
    held: v.number(),
    steps: v.array(v.object({ streams: v.number(), completed: v.number() })),
  }),
  memory: v.object({
    idleBytes: v.pipe(v.number(), v.minValue(1)),
    steadyBytes: v.pipe(v.number(), v.minValue(1)),
    recoveredBytes: v.pipe(v.number(), v.minValue(1)),
  }),
});
const ResultsSchema = v.object({
  results: v.array(v.object({ name: v.string(), status: v.string(), field: v.optional(v.unknown()) })),
});

const wanted = process.env.MODELGATE_BENCH_TESTS === "1" && Bun.which("wrk") !== null;

describe("bench --small, the field's sections", () => {
  test.skipIf(!wanted)(
    "direct and modelgate get every section; the report prints them",
    async () => {
      const out = mkdtempSync(join(tmpdir(), "modelgate-bench-field-"));
      try {
        const args = [
          "--small",
          "--targets",
          "modelgate",
          "--paths",
          "none",
          "--bin",
          binary(),
          "--out",
          out,
        ];
        const sections = ["--sections", "latency,sweep,sustained,frames,stalls,memory"];
        const proc = Bun.spawn([process.execPath, join(ROOT, "bench/run.ts"), ...args, ...sections], {
          cwd: ROOT,
          stdin: "ignore",
          stdout: "pipe",
          stderr: "pipe",
        });
        const timer = setTimeout(() => proc.kill("SIGKILL"), 290_000);
        const [stdout, stderr, code] = await Promise.all([
          new Response(proc.stdout).text(),
          new Response(proc.stderr).text(),
          proc.exited,
        ]);
        clearTimeout(timer);
        if (code !== 0) throw new Error(`the bench exited with ${code}:\n${stderr}\n${stdout}`);

        const { results } = v.parse(
          ResultsSchema,
          JSON.parse(readFileSync(join(out, "latest.json"), "utf8")),
        );
        expect(results.map((r) => [r.name, r.status])).toEqual([
          ["direct", "ok"],
          ["modelgate", "ok"],
        ]);
        for (const result of results) {
          const field = v.parse(FieldSchema, result.field);
          expect(field.sweep.rungs.map((r) => r.concurrency)).toEqual([1, 4, 16]);
          expect(field.sweep.frontier.map((r) => r.boundUs)).toEqual([...FRONTIER_BOUNDS_US]);
          // Every answer waited for the upstream's 20 ms: the marker went through.
          for (const rung of field.sustained.rungs.filter((r) => r.requests > 0))
            expect(rung.p50Us).toBeGreaterThanOrEqual(20_000);
          expect(field.frames.streams + field.frames.failed).toBe(3);
          expect(field.stalls.steps[0]?.streams).toBe(10);
        }
        const report = readFileSync(join(out, "latest.md"), "utf8");
        expect(report).toContain("# modelgate benchmark (full, small sizes)");
        expect(report).toContain("## The field's method");
        expect(report).toContain("Concurrency sweep, modelgate:");
        expect(report).toContain("Sustained sweep (20 ms upstream), modelgate:");
        // Only the chosen sections: the bench's own table is not in the report.
        expect(report).not.toContain("req/s closed (c=32)");
      } finally {
        rmSync(out, { recursive: true, force: true });
      }
    },
    300_000,
  );
});
