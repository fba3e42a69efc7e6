// The metric catalog (FAMILIES in src/metrics/families.ts): what GET /metrics renders is exactly the catalog,
// with each family's HELP, TYPE and bucket set as written there, and the catalog's entries build.
import { expect, test } from "bun:test";
import { FAMILIES, gauge, gaugeSet } from "../../src/metrics/families.ts";
import { Metrics } from "../../src/metrics/metrics.ts";
import { TrafficMetrics } from "../../src/metrics/traffic.ts";

function rendered(): string[] {
  const traffic = new TrafficMetrics(10, { circuits: () => [], journalBacklog: () => 0 });
  const lines = new Metrics().render().trimEnd().split("\n");
  traffic.render(lines);
  return lines;
}

test("/metrics renders every family of the catalog, once, with its HELP and TYPE", () => {
  const lines = rendered();
  const kinds = ["counter", "histogram", "gauge"] as const;
  const expected = kinds.flatMap((kind) =>
    Object.entries(FAMILIES[kind]).map(([name, family]) => [
      `# HELP ${name} ${family.help}`,
      `# TYPE ${name} ${kind}`,
    ]),
  );
  const headers = lines.filter((l) => l.startsWith("# "));
  expect(headers).toHaveLength(expected.length * 2);
  for (const [help, type] of expected) {
    expect(headers.indexOf(type ?? "")).toBe(headers.indexOf(help ?? "") + 1);
  }
});

test("bucket sets rise strictly and every histogram names one", () => {
  const sets: Record<string, number[]> = FAMILIES.buckets;
  for (const bounds of Object.values(sets)) {
    expect(bounds.length).toBeGreaterThan(0);
    for (let i = 1; i < bounds.length; i++) expect(bounds[i] ?? 0).toBeGreaterThan(bounds[i - 1] ?? 0);
  }
  for (const family of Object.values(FAMILIES.histogram)) expect(sets[family.buckets]).toBeDefined();
});

test("a gauge is built with labels exactly when the catalog gives it labels", () => {
  expect(() => gauge("modelgate_channel_circuit_state", () => 0)).toThrow("gaugeSet");
  expect(() => gaugeSet("modelgate_requests_in_flight", () => [])).toThrow("no labels");
  const lines: string[] = [];
  gaugeSet("modelgate_channel_circuit_state", () => [{ values: ["a"], value: 2 }]).render(lines);
  expect(lines.at(-1)).toBe('modelgate_channel_circuit_state{channel="a"} 2');
});
