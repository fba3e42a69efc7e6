// The architecture as checks: folders are stages, so imports between folders point one way (no
// runtime cycle between folders), and inside a folder no two modules need each other, not even
// for types. The graph is read from the sources with Bun's transpiler (test/unit/import-graph.ts).
import { describe, expect, test } from "bun:test";
import { resolve } from "node:path";
import { addEdge, cycles, folderOf, type Graph, readImports } from "./import-graph.ts";

const SRC = resolve(import.meta.dir, "../../src");
const modules = await readImports(SRC);

describe("the import graph of src/", () => {
  test("is read: every module is found and the pipeline's imports are seen", () => {
    const text = modules.find((m) => m.file === "pipeline/text.ts");
    expect(modules.length).toBeGreaterThan(150);
    expect(text?.runtime).toContain("http/body.ts");
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
