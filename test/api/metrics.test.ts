import { describe, expect, it } from 'vitest';
import { call, KEYS, useArbiter } from '../support/arbiter-process.js';

const arbiter = useArbiter();

async function scrape(): Promise<string> {
  const res = await fetch(`${arbiter.url}/metrics`);
  expect(res.headers.get('content-type')).toMatch(/text\/plain/);
  return res.text();
}

function value(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

describe('/metrics', () => {
  it('exposes decision, audit, chain and index series that move with decisions, without actor ids', async () => {
    const before = await scrape();
    const allow = 'arbiter_decisions_total{outcome="ALLOW",capability="database.query"}';
    const unregistered = 'arbiter_decisions_total{outcome="DENY",capability="unregistered"}';
    // By the tier that decided; none when denied before any policy was asked. No namespace label.
    const byCluster = 'arbiter_tier_decisions_total{outcome="ALLOW",tier="cluster"}';
    const beforePolicies = 'arbiter_tier_decisions_total{outcome="DENY",tier="none"}';
    const propose = (capability: string) =>
      call(arbiter.url, 'POST', '/api/v1/governance/propose', {
        key: KEYS.agent,
        body: {
          actor: { id: 'agent-001', type: 'ai-agent' },
          action: { capability, parameters: { query: 'q' } },
        },
      });
    await propose('database.query');
    await propose('database.query');
    await propose('made.up');
    const after = await scrape();
    expect(value(after, allow) - value(before, allow)).toBe(2);
    expect(value(after, unregistered) - value(before, unregistered)).toBe(1);
    expect(value(after, byCluster) - value(before, byCluster)).toBe(2);
    expect(value(after, beforePolicies) - value(before, beforePolicies)).toBe(1);
    expect(after).not.toMatch(/arbiter_tier_decisions_total\{[^}]*namespace=/);
    expect(value(after, 'arbiter_decision_duration_seconds_count')).toBeGreaterThanOrEqual(3);
    expect(value(after, 'arbiter_audit_append_duration_seconds_count')).toBeGreaterThan(
      value(before, 'arbiter_audit_append_duration_seconds_count'),
    );
    expect(value(after, 'arbiter_audit_chain_verified')).toBe(1);
    expect(value(after, 'arbiter_index_objects{kind="Capability"}')).toBe(5);
    expect(after).toMatch(
      /arbiter_http_requests_total\{method="POST",route="\/api\/v1\/governance\/propose",status="200"\}/,
    );
    expect(after).not.toMatch(/agent-001/);
  });
});
