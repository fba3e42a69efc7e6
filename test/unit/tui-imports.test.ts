// The terminal UI is a client of the admin API: it takes the gateway's view types (type-only
// imports, erased by the bundler) and at run time needs nothing of the gateway but leaf blocks of
// src/base/ (the money format), so the UI loads no server code.
import { expect, test } from "bun:test";
import { resolve } from "node:path";
import { readImports } from "./import-graph.ts";

const ROOT = resolve(import.meta.dir, "../..");
const modules = await readImports(resolve(ROOT, "admin-tui"));

test("the TUI reads the admin views' types from src/admin/, type-only", () => {
  const types = modules.find((m) => m.file === "types.ts");
  expect(types?.all).toContain("../src/admin/keys.ts");
  expect(types?.runtime).not.toContain("../src/admin/keys.ts");
});

test("at run time the TUI imports nothing from src/ but src/base/", () => {
  const outside = modules.flatMap((m) =>
    m.runtime
      .filter((t) => t.startsWith("../src/") && !t.startsWith("../src/base/"))
      .map((t) => `${m.file} -> ${t}`),
  );
  expect(modules.length).toBeGreaterThan(10);
  expect(outside).toEqual([]);
});
