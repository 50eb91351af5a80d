import { Counter, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { Tally } from './tally.js';

/** A registry with one counter fed by a tally, as Metrics wires them. */
function tallied<Label extends string>(labelNames: readonly Label[]) {
  const registry = new Registry();
  const tally = new Tally(labelNames);
  const counter: Counter<Label> = new Counter({
    name: 'things_total',
    help: 'things',
    labelNames,
    registers: [registry],
    collect: (): void => tally.publishTo(counter),
  });
  return { registry, tally };
}

describe('Tally', () => {
  it('shows each label combination with its count when scraped, however often', async () => {
    const { registry, tally } = tallied(['method', 'route', 'status'] as const);
    tally.count(['POST', '/a', 200]);
    tally.count(['POST', '/a', 200]);
    tally.count(['POST', '/a', 429]);
    tally.count(['GET', '/b', 200]);
    const first = await registry.metrics();
    expect(first).toContain('things_total{method="POST",route="/a",status="200"} 2');
    expect(first).toContain('things_total{method="POST",route="/a",status="429"} 1');
    expect(first).toContain('things_total{method="GET",route="/b",status="200"} 1');
    // A second scrape does not count anything twice; new counts show up.
    tally.count(['GET', '/b', 200]);
    const second = await registry.metrics();
    expect(second).toContain('things_total{method="POST",route="/a",status="200"} 2');
    expect(second).toContain('things_total{method="GET",route="/b",status="200"} 2');
  });

  it('works with a single label, and shows nothing before the first count', async () => {
    const { registry, tally } = tallied(['outcome'] as const);
    expect(await registry.metrics()).not.toMatch(/things_total\{/);
    tally.count(['DENY']);
    expect(await registry.metrics()).toContain('things_total{outcome="DENY"} 1');
  });

  it('keeps values apart that would join into the same text', async () => {
    const { registry, tally } = tallied(['a', 'b'] as const);
    tally.count(['x,y', 'z']);
    tally.count(['x', 'y,z']);
    const text = await registry.metrics();
    expect(text).toContain('things_total{a="x,y",b="z"} 1');
    expect(text).toContain('things_total{a="x",b="y,z"} 1');
  });
});
