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

// One record per text protocol (src/protocols/<name>/index.ts, registered in src/protocols/index.ts):
// what a protocol means is decided in its record, and everything else looks the record up by name.
// A switch on the protocol, a table keyed by it, or a comparison with one protocol's name outside
// src/protocols/ is a second place a new protocol would have to be added, which tsc cannot list.
const PROTOCOL_NAME = `["'](?:responses|chat|messages)["']`;
const PER_PROTOCOL: readonly [string, RegExp][] = [
  ["a table keyed by protocol", /Record<\s*TextProtocol\b/],
  ["a switch on a protocol", /\bswitch\s*\(\s*[\w.]*\b(?:protocol|from|to)\s*\)/],
  [
    "a comparison with a protocol's name",
    new RegExp(String.raw`\b(?:protocol|from|to)\s*[!=]==?\s*${PROTOCOL_NAME}`),
  ],
  [
    "a comparison with a protocol's name",
    new RegExp(String.raw`${PROTOCOL_NAME}\s*[!=]==?\s*[\w.]*\b(?:protocol|from|to)\b`),
  ],
  ["a case per protocol", /\bcase\s+["'](?:responses|chat)["']\s*:/],
];

/** The per-protocol dispatches in `source` (comments left out), as "line: what". */
function perProtocolDispatch(source: string): string[] {
  const found: string[] = [];
  source.split("\n").forEach((line, i) => {
    const code = line.replace(/\/\/.*$/, "");
    for (const [what, pattern] of PER_PROTOCOL) if (pattern.test(code)) found.push(`${i + 1}: ${what}`);
  });
  // An object literal with a key per protocol is a table too.
  const keys = new Set([...source.matchAll(/^\s*(responses|chat|messages)\s*:/gm)].map((m) => m[1]));
  if (keys.size === 3) found.push("a table with a key per protocol");
  return found;
}

describe("one record per text protocol", () => {
  test("the check finds each kind of per-protocol dispatch", () => {
    const samples = [
      "const T: Record<TextProtocol, string> = x;",
      "switch (view.protocol) {",
      'if (t.to === "responses") x();',
      'const f = "messages" === protocol;',
      '    case "chat":',
      "const T = {\n  responses: 1,\n  chat: 2,\n  messages: 3,\n};",
    ];
    for (const sample of samples) expect(perProtocolDispatch(sample)).not.toEqual([]);
    expect(
      perProtocolDispatch('const r = protocolOf(protocol).path;\nif (family === "messages") x();'),
    ).toEqual([]);
  });

  test("outside src/protocols/, nothing switches on the protocol", async () => {
    const found: string[] = [];
    for (const m of modules) {
      if (m.file.startsWith("protocols/")) continue;
      const source = await Bun.file(resolve(SRC, m.file)).text();
      for (const hit of perProtocolDispatch(source)) found.push(`${m.file}:${hit}`);
    }
    expect(found).toEqual([]);
  });

  test("the records call no stage: at run time src/protocols/ imports only wire/ and base/, src/endpoints/ only the protocols", () => {
    const outside = (folder: string, allowed: readonly string[]) =>
      modules.flatMap((m) =>
        m.file.startsWith(`${folder}/`)
          ? m.runtime.filter((t) => !allowed.includes(folderOf(t))).map((t) => `${m.file} -> ${t}`)
          : [],
      );
    expect(outside("protocols", ["protocols", "wire", "base"])).toEqual([]);
    expect(outside("endpoints", ["endpoints", "protocols"])).toEqual([]);
  });

  test("each registered protocol has its own folder, filed under its name, and its simulator route", async () => {
    const { PROTOCOLS } = await import("../../src/protocols/index.ts");
    const { SIM_TEXT_ROUTES } = await import("../../src/sim/text/routes.ts");
    for (const [name, record] of Object.entries(PROTOCOLS)) {
      expect<string>(record.name).toBe(name);
      expect(modules.some((m) => m.file === `protocols/${name}/index.ts`)).toBe(true);
      expect(SIM_TEXT_ROUTES.some((r) => r.path === record.path)).toBe(true);
    }
  });
});

// One record per endpoint family (src/endpoints/<family>/index.ts, registered by family in
// src/endpoints/index.ts): its paths are written there once, and the gateway's route table and the
// simulator serve each of them.
describe("one record per endpoint family", () => {
  test("every path of every family is a POST route of the gateway and of the simulator", async () => {
    const { ENDPOINT_PATHS } = await import("../../src/endpoints/index.ts");
    const { ROUTES } = await import("../../src/server.ts");
    const { SIM_ROUTES } = await import("../../src/sim/server.ts");
    expect(ENDPOINT_PATHS.length).toBeGreaterThan(8);
    for (const path of ENDPOINT_PATHS) {
      expect([path, ROUTES.some(([method, at]) => method === "POST" && at === path)]).toEqual([path, true]);
      expect([path, SIM_ROUTES.some((r) => r.method === "POST" && r.path === path)]).toEqual([path, true]);
    }
  });

  test("outside src/endpoints/, no module writes a non-text family's path", async () => {
    const { ENDPOINTS } = await import("../../src/endpoints/index.ts");
    const media = Object.values(ENDPOINTS)
      .filter((record) => record.family !== "text" && record.family !== "messages")
      .flatMap((record): string[] => Object.values(record.paths));
    expect(media.length).toBeGreaterThan(5);
    const found: string[] = [];
    for (const m of modules) {
      if (m.file.startsWith("endpoints/")) continue;
      const source = await Bun.file(resolve(SRC, m.file)).text();
      for (const path of media) if (source.includes(`"${path}"`)) found.push(`${m.file}: ${path}`);
    }
    expect(found).toEqual([]);
  });
});

// `serve` evaluates its static import graph before its first request; what only some requests or
// some configurations need is imported at its first use (a dynamic import, its own chunk in the
// executable), which keeps idle memory down (docs/benchmarks.md, "Idle memory").
describe("what serve evaluates at start", () => {
  const byFile = new Map(modules.map((m) => [m.file, m]));
  const reached = new Set<string>();
  const walk = (file: string): void => {
    if (reached.has(file)) return;
    reached.add(file);
    for (const target of byFile.get(file)?.evaluated ?? []) {
      if (byFile.has(target)) walk(target);
      else reached.add(target);
    }
  };
  walk("cli/serve.ts");

  test("is read: the request path is in it", () => {
    expect(reached).toContain("server.ts");
    expect(reached).toContain("pipeline/text.ts");
    expect(reached).toContain("elysia");
  });

  test("leaves out what only some requests or configurations use", () => {
    const later = [
      "@breezystack/lamejs", // the simulator's MP3 encoder: an mp3 speech request
      "music-metadata", // the audio upload reader: a transcription
      "handlers/speech.ts",
      "handlers/images.ts",
      "handlers/transcriptions.ts",
      "sim/server.ts", // the simulator's HTTP server (`modelgate sim`); in process, its routes
      "limits/redis.ts", // with a Redis URL only
      "limits/redis-feed.ts",
      "cache/redis.ts", // with a response cache on only
      "cache/sqlite.ts",
      "store/pg/store.ts", // on PostgreSQL only
      "telemetry/otel.ts", // with [telemetry] on only
      "cli/tui.ts",
    ];
    expect(later.filter((file) => reached.has(file))).toEqual([]);
  });
});
