import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import { OUTCOMES, type Outcome } from '../api/types.js';

const COLOURS: Record<Outcome, string> = {
  ALLOW: '#2e7d32',
  DENY: '#c62828',
  ESCALATE: '#e65100',
  REQUIRE_CONFIRMATION: '#1565c0',
};
const MINUTE_MS = 60_000;
/** Past a day of minutes the bucket widens, so the chart keeps at most this many points. */
const MAX_BUCKETS = 1_440;

export interface ChartSeries {
  /** Bucket starts, in seconds (uPlot's time unit). */
  times: number[];
  counts: Record<Outcome, number[]>;
  bucketMinutes: number;
}

/** Decisions counted per bucket (a minute, or wider for long ranges) and outcome over [fromMs, toMs]. */
export function bucketDecisions(
  decisions: { timestamp: string; outcome: Outcome }[],
  fromMs: number,
  toMs: number,
): ChartSeries {
  const minutes = Math.max(1, Math.ceil((toMs - fromMs) / MINUTE_MS));
  const bucketMinutes = Math.ceil(minutes / MAX_BUCKETS);
  const bucketMs = bucketMinutes * MINUTE_MS;
  const start = Math.floor(fromMs / bucketMs) * bucketMs;
  const buckets = Math.floor((toMs - start) / bucketMs) + 1;
  const times = Array.from({ length: buckets }, (_, i) => (start + i * bucketMs) / 1000);
  const counts = Object.fromEntries(OUTCOMES.map((o) => [o, new Array<number>(buckets).fill(0)])) as Record<
    Outcome,
    number[]
  >;
  for (const d of decisions) {
    const i = Math.floor((Date.parse(d.timestamp) - start) / bucketMs);
    if (i >= 0 && i < buckets) counts[d.outcome][i]! += 1;
  }
  return { times, counts, bucketMinutes };
}

function cssColour(name: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || 'currentColor';
}

/** A uPlot line chart of decisions per minute by outcome; its summary is also text. */
export function DecisionsChart({ series, summary }: { series: ChartSeries; summary: string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const axis = {
      stroke: cssColour('--fg'),
      grid: { stroke: cssColour('--grid') },
      ticks: { stroke: cssColour('--grid') },
    };
    const plot = new uPlot(
      {
        width: Math.max(element.clientWidth, 280),
        height: 220,
        series: [
          {},
          ...OUTCOMES.map((o) => ({
            label: o,
            stroke: COLOURS[o],
            width: 2,
            points: { show: true, size: 5 },
          })),
        ],
        axes: [
          axis,
          { ...axis, label: series.bucketMinutes === 1 ? 'per minute' : `per ${series.bucketMinutes} min` },
        ],
        scales: { y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
      },
      [series.times, ...OUTCOMES.map((o) => series.counts[o])],
      element,
    );
    const resize = new ResizeObserver(() =>
      plot.setSize({ width: Math.max(element.clientWidth, 280), height: 220 }),
    );
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [series]);
  return (
    <figure class="chart">
      <figcaption>{summary}</figcaption>
      <div ref={box} role="img" aria-label={summary} />
    </figure>
  );
}
