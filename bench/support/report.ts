/** One figure of a benchmark: Arbiter's value, its baseline's, and the target it is held to. */
export interface Figure {
  benchmark: string;
  metric: string;
  arbiter: number;
  baseline: number | undefined;
  unit: string;
  /** arbiter / baseline (or the other way round for latencies: see `higherIsBetter`). */
  ratio: number | undefined;
  target: string | undefined;
  met: boolean | undefined;
  note?: string;
}

export interface FigureInput {
  benchmark: string;
  metric: string;
  arbiter: number;
  baseline?: number;
  unit: string;
  /** Ratio as arbiter/baseline when true (throughput), baseline/arbiter otherwise. */
  higherIsBetter?: boolean;
  target?: { text: string; met: boolean };
  note?: string;
}

export class Report {
  readonly figures: Figure[] = [];

  add(input: FigureInput): Figure {
    const { baseline } = input;
    const ratio =
      baseline === undefined || baseline === 0 || input.arbiter === 0
        ? undefined
        : (input.higherIsBetter ?? true)
          ? input.arbiter / baseline
          : baseline / input.arbiter;
    const figure: Figure = {
      benchmark: input.benchmark,
      metric: input.metric,
      arbiter: input.arbiter,
      baseline,
      unit: input.unit,
      ratio,
      target: input.target?.text,
      met: input.target?.met,
      ...(input.note ? { note: input.note } : {}),
    };
    this.figures.push(figure);
    console.log(`  ${formatLine(figure)}`);
    return figure;
  }

  /** A Markdown table of every figure, for bench/RESULTS.md. */
  markdown(): string {
    const rows = this.figures.map((f) =>
      [
        f.benchmark,
        f.metric,
        `${format(f.arbiter)} ${f.unit}`,
        f.baseline === undefined ? '' : `${format(f.baseline)} ${f.unit}`,
        f.ratio === undefined ? '' : f.ratio.toFixed(2),
        f.target ?? '',
        f.met === undefined ? '' : f.met ? 'met' : '**missed**',
      ].join(' | '),
    );
    return [
      '| benchmark | metric | Arbiter | baseline | ratio | target | |',
      '|---|---|---|---|---|---|---|',
      ...rows.map((r) => `| ${r} |`),
    ].join('\n');
  }
}

export function format(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  if (Math.abs(value) >= 100) return Math.round(value).toLocaleString('en-US');
  if (Math.abs(value) >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

function formatLine(f: Figure): string {
  const base = f.baseline === undefined ? '' : `  baseline ${format(f.baseline)} ${f.unit}`;
  const ratio = f.ratio === undefined ? '' : `  ratio ${f.ratio.toFixed(2)}`;
  const target = f.target ? `  target ${f.target}: ${f.met ? 'met' : 'MISSED'}` : '';
  return `${f.metric}: ${format(f.arbiter)} ${f.unit}${base}${ratio}${target}${f.note ? `  (${f.note})` : ''}`;
}

export function percentile(sortedMs: readonly number[], p: number): number {
  if (sortedMs.length === 0) return Number.NaN;
  const index = Math.min(sortedMs.length - 1, Math.ceil((p / 100) * sortedMs.length) - 1);
  return sortedMs[Math.max(0, index)]!;
}
