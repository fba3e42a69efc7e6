// The architecture as checks: folders are stages, so imports between folders point one way (no
// runtime cycle between folders), and inside a folder no two modules need each other, not even
// for types; and the walk of one request passes each folder once, in pipeline order (the rules of
// "the walk" below). The graph is read from the sources with Bun's transpiler
// (test/unit/import-graph.ts).
import { describe, expect, test } from "bun:test";
import { resolve } from "node:path";
import { addEdge, cycles, folderOf, type Graph, readImports } from "./import-graph.ts";

const SRC = resolve(import.meta.dir, "../../src");
const modules = await readImports(SRC);

describe("the import graph of src/", () => {
  test("is read: every module is found and the pipeline's imports are seen", () => {
    const text = modules.find((m) => m.file === "pipeline/text.ts");
    expect(modules.length).toBeGreaterThan(150);
    expect(text?.runtime).toContain("wire/json.ts");
    // A type-only import is in `all` and erased from `runtime`.
    expect(text?.all).toContain("http/context.ts");
    expect(text?.runtime).not.toContain("http/context.ts");
  });

  test("the cycle finder finds a cycle and passes a chain", () => {
    const chain: Graph = new Map();
    addEdge(chain, "a", "b");
    addEdge(chain, "b", "c");
    expect(cycles(chain)).toEqual([]);
    addEdge(chain, "c", "a");
    expect(cycles(chain)).toEqual([["a", "b", "c"]]);
  });

  test("no runtime import cycle between folders", () => {
    const folders: Graph = new Map();
    const why = new Map<string, string>();
    for (const m of modules) {
      for (const target of m.runtime) {
        const from = folderOf(m.file);
        const to = folderOf(target);
        if (from === to) continue;
        addEdge(folders, from, to);
        why.set(`${from} -> ${to}`, `${m.file} -> ${target}`);
      }
    }
    const found = cycles(folders).map((component) =>
      [...why].filter(([edge]) => component.some((f) => edge.startsWith(`${f} -> `))).map(([, w]) => w),
    );
    expect(found).toEqual([]);
  });

  test("no import cycle inside a folder, type-only imports included", () => {
    const inside: Graph = new Map();
    for (const m of modules) {
      for (const target of m.all) if (folderOf(m.file) === folderOf(target)) addEdge(inside, m.file, target);
    }
    expect(cycles(inside)).toEqual([]);
  });
});

/** The runtime imports from modules under `from` (a folder prefix) into `into`, as "module -> target". */
function runtimeEdges(from: string, into: string): string[] {
  return modules.flatMap((m) =>
    m.file.startsWith(from)
      ? m.runtime.filter((t) => t.startsWith(into)).map((t) => `${m.file} -> ${t}`)
      : [],
  );
}

// The walk of one request (docs/architecture.md): the request pipelines (pipeline/text.ts,
// images.ts) call billing/ once, through the layer that admits, runs route → call → relay inside
// it and settles; upstream/ is entered by the route and call stages only, whose answer leaves with
// its usage reading bound; the relay, after the call and inside the layer, enters neither; auth/ is
// entered by the authenticate stage only; http/ (the edge) reads the body before the row runs, and
// neither the rows nor the pipelines call back into it. So each of http/, auth/, billing/ and
// upstream/ is passed once,
// and in pipeline order: auth first, billing around, upstream before the relay. A regression (the
// relay settling, or reading usage through upstream/) fails here.
describe("the walk of one request", () => {
  test("the relay imports neither upstream/ nor billing/ at run time", () => {
    expect(runtimeEdges("pipeline/relay/", "upstream/")).toEqual([]);
    expect(runtimeEdges("pipeline/relay/", "billing/")).toEqual([]);
  });

  test("the pipelines reach billing/ through the one layer entry only", () => {
    const targets = runtimeEdges("pipeline/", "billing/").map((edge) => edge.split(" -> ")[1]);
    expect(new Set(targets)).toEqual(new Set(["billing/layer.ts"]));
  });

  test("in pipeline/, only the route and call stages (and the image and media runs, which route and call) enter upstream/", () => {
    const stages = new Set([
      "pipeline/channels.ts",
      "pipeline/call.ts",
      "pipeline/images.ts",
      "pipeline/embeddings.ts",
      "pipeline/media-call.ts",
      "pipeline/transcriptions.ts",
      "pipeline/speech.ts",
    ]);
    const entering = new Set(runtimeEdges("pipeline/", "upstream/").map((edge) => edge.split(" -> ")[0]));
    expect([...entering].filter((file) => !stages.has(file ?? ""))).toEqual([]);
    expect(entering.has("pipeline/call.ts")).toBe(true);
  });

  test("the edge reads the body before the row runs: neither the text rows nor the pipelines come back to http/", () => {
    for (const row of ["handlers/chat.ts", "handlers/responses.ts", "handlers/messages.ts"])
      expect(runtimeEdges(row, "http/")).toEqual([]);
    expect(runtimeEdges("pipeline/", "http/")).toEqual([]);
  });

  // Every handler, not only the text rows: the image rows, the admin API and every row added
  // later read a body they take after authenticating through src/request/body.ts, and the
  // WebSocket mode, the edge of each of its frames, lives in http/ itself. Type-only imports (the
  // request's context type) are erased and call nothing.
  test("no handler calls back into http/: every row in handlers/ and the admin API", () => {
    const rows = modules.filter((m) => m.file.startsWith("handlers/") || m.file.startsWith("admin/"));
    expect(rows.length).toBeGreaterThan(20);
    expect([...runtimeEdges("handlers/", "http/"), ...runtimeEdges("admin/", "http/")]).toEqual([]);
  });

  test("in pipeline/, only the authenticate stage enters auth/ (the model check is pipeline/model.ts)", () => {
    const entering = new Set(runtimeEdges("pipeline/", "auth/").map((edge) => edge.split(" -> ")[0]));
    expect([...entering]).toEqual(["pipeline/authenticate.ts"]);
  });
});
