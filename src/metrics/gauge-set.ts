// Gauges with labels whose values are read at scrape time (one series per label set the reader
// returns): channel circuit states and the like, which are state, not events to count.
import { escapeLabel, type LabelValues } from "./instruments.ts";

export class GaugeSet {
  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
    readonly read: () => Iterable<{ values: LabelValues; value: number }>,
  ) {}

  render(lines: string[]): void {
    lines.push(`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} gauge`);
    for (const { values, value } of this.read()) {
      const labels = this.labelNames.map((name, i) => `${name}="${escapeLabel(values[i] ?? "")}"`);
      lines.push(`${this.name}{${labels.join(",")}} ${value}`);
    }
  }
}
