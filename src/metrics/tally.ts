import type { Counter } from 'prom-client';

type LabelValue = string | number;

/**
 * Counts by label values in nested maps, handed to a prom-client counter when it is
 * scraped. `counter.inc(labels)` builds and hashes a label string on every call (about
 * 400 B of garbage for three labels); the per-request counters count here instead.
 */
export class Tally<Label extends string> {
  private readonly counts = new Map<LabelValue, unknown>();

  /** `labelNames`: the counter's, in the order count() takes their values. */
  constructor(private readonly labelNames: readonly Label[]) {}

  /** One more for these label values (one per label name, in order). */
  count(values: readonly LabelValue[]): void {
    let level = this.counts;
    const last = this.labelNames.length - 1;
    for (let i = 0; i < last; i++) {
      let next = level.get(values[i]!) as Map<LabelValue, unknown> | undefined;
      if (next === undefined) level.set(values[i]!, (next = new Map()));
      level = next;
    }
    level.set(values[last]!, ((level.get(values[last]!) as number | undefined) ?? 0) + 1);
  }

  /** Sets the counter to the counts: for its `collect`, which prom-client calls before each scrape. */
  publishTo(counter: Counter<Label>): void {
    counter.reset();
    this.visit(this.counts, 0, {} as Record<Label, LabelValue>, counter);
  }

  private visit(
    level: Map<LabelValue, unknown>,
    depth: number,
    labels: Record<Label, LabelValue>,
    counter: Counter<Label>,
  ): void {
    const name = this.labelNames[depth]!;
    for (const [value, below] of level) {
      const at = { ...labels, [name]: value };
      if (depth === this.labelNames.length - 1) counter.inc(at, below as number);
      else this.visit(below as Map<LabelValue, unknown>, depth + 1, at, counter);
    }
  }
}
