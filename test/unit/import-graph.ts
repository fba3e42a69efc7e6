// The import graph of src/, for the architecture checks: every module's relative imports, split
// into runtime ones (what Bun's transpiler keeps: type-only imports are erased) and all of them
// (type-only included, read from the import and export statements), plus the strongly connected
// components of a graph (Tarjan), which are exactly its cycles.

import { dirname, relative, resolve } from "node:path";
import { Glob } from "bun";

export interface ModuleImports {
  /** Path relative to the root, e.g. `pipeline/text.ts`. */
  file: string;
  /** Modules this one needs at run time. */
  runtime: string[];
  /** Every module it names, type-only imports included. */
  all: string[];
  /**
   * What evaluating it evaluates first: its static runtime imports (no `import()`), modules as
   * paths like `runtime`, packages by their specifier (`valibot`, `drizzle-orm/bun-sqlite`).
   */
  evaluated: string[];
}

const STATIC_SPECIFIER = /(?:^|[\n;])\s*(?:import|export)\b[^;'"]*?(?:\bfrom\s*)?["']([^"']+)["']/g;

function resolved(root: string, file: string, specifier: string): string | undefined {
  if (!specifier.startsWith(".")) return undefined;
  return relative(root, resolve(dirname(resolve(root, file)), specifier));
}

/** The relative imports of every `.ts` and `.tsx` module under `root` (declaration files left out). */
export async function readImports(root: string): Promise<ModuleImports[]> {
  const transpilers = {
    ts: new Bun.Transpiler({ loader: "ts" }),
    tsx: new Bun.Transpiler({ loader: "tsx" }),
  };
  const files = [...new Glob("**/*.{ts,tsx}").scanSync(root)].filter((f) => !f.endsWith(".d.ts")).sort();
  const modules: ModuleImports[] = [];
  for (const file of files) {
    // A shebang line is not TypeScript; the transpiler refuses it.
    const source = (await Bun.file(resolve(root, file)).text()).replace(/^#!.*/, "");
    const scanned = transpilers[file.endsWith(".tsx") ? "tsx" : "ts"].scanImports(source);
    const runtime = scanned
      .map((i) => resolved(root, file, i.path))
      .filter((p): p is string => p !== undefined);
    const evaluated = scanned
      .filter((i) => i.kind === "import-statement")
      .map((i) => resolved(root, file, i.path) ?? i.path);
    const all = [...source.matchAll(STATIC_SPECIFIER)]
      .map((m) => resolved(root, file, m[1] ?? ""))
      .filter((p): p is string => p !== undefined);
    modules.push({ file, runtime, all: [...new Set([...all, ...runtime])], evaluated });
  }
  return modules;
}

/** The folder a module belongs to: its first path segment, or the file itself at the root. */
export function folderOf(file: string): string {
  const slash = file.indexOf("/");
  return slash < 0 ? file : file.slice(0, slash);
}

export type Graph = Map<string, Set<string>>;

export function addEdge(graph: Graph, from: string, to: string): void {
  let targets = graph.get(from);
  if (targets === undefined) {
    targets = new Set();
    graph.set(from, targets);
  }
  targets.add(to);
  if (!graph.has(to)) graph.set(to, new Set());
}

/** The components of more than one node, or of one node that imports itself: the graph's cycles. */
export function cycles(graph: Graph): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next);
    next++;
    stack.push(node);
    onStack.add(node);
    for (const target of graph.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node) ?? 0, low.get(target) ?? 0));
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node) ?? 0, index.get(target) ?? 0));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string | undefined;
    do {
      member = stack.pop();
      if (member === undefined) break;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || graph.get(node)?.has(node)) found.push(component.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}
