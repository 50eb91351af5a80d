import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  call,
  KEYS,
  removeDir,
  startArbiter,
  tempDir,
  tempManifests,
  type ArbiterProcess,
} from '../support/arbiter-process.js';

let arbiter: ArbiterProcess;
let dataDir: string;
let manifestsDir: string;
const api = (path: string, key: string = KEYS.auditor) => call(arbiter.url, 'GET', `/api/v1${path}`, { key });
const propose = (capability: string, parameters: Record<string, unknown>) =>
  call(arbiter.url, 'POST', '/api/v1/governance/propose', {
    key: KEYS.agent,
    body: {
      actor: { id: 'agent-001', type: 'ai-agent' },
      action: { capability, parameters },
      context: { session_id: 's-1' },
    },
  });

beforeAll(async () => {
  dataDir = await tempDir();
  manifestsDir = await tempManifests();
  arbiter = await startArbiter({ dataDir, manifestsDir });
});
afterAll(async () => {
  await arbiter.stop();
  await removeDir(dataDir);
  await removeDir(manifestsDir);
});

describe('audit log', () => {
  it('records the configuration loaded from manifests once, and each decision', async () => {
    const config = await api('/audit/log?event_type=capability.registered');
    expect(config.body.total).toBe(5);
    const decision = await propose('database.query', { query: 'select 1' });
    const entries = await api(`/audit/log?decision_id=${decision.body.decision_id}`);
    expect(entries.body.total).toBe(1);
    const [entry] = entries.body.entries;
    expect(entry).toMatchObject({
      id: decision.body.audit_ref,
      event_type: 'governance.decision',
      actor_id: 'agent-001',
      capability: 'database.query',
      outcome: 'ALLOW',
      decision_id: decision.body.decision_id,
      policies_evaluated: expect.any(Array),
      hash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
      previous_hash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
    });
  });

  it('filters by actor, capability, outcome, event type and time, and pages with exact totals', async () => {
    for (let i = 0; i < 7; i += 1)
      await propose('payments.transfer', { amount: i * 4000, currency: 'USD', to: 'x' });
    const all = await api('/audit/log?capability=payments.transfer&event_type=governance.decision&limit=200');
    expect(all.body.total).toBe(7);
    const denied = await api('/audit/log?capability=payments.transfer&outcome=DENY');
    expect(denied.body.entries.every((e: { outcome: string }) => e.outcome === 'DENY')).toBe(true);
    expect(denied.body.total).toBe(
      all.body.entries.filter((e: { outcome: string }) => e.outcome === 'DENY').length,
    );
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: { entries: Array<{ id: string }>; cursor: string | null; total: number } } =
        await api(
          `/audit/log?capability=payments.transfer&event_type=governance.decision&limit=3${cursor ? `&cursor=${cursor}` : ''}`,
        );
      expect(page.body.total).toBe(7);
      seen.push(...page.body.entries.map((e) => e.id));
      cursor = page.body.cursor;
    } while (cursor);
    expect(seen).toEqual(all.body.entries.map((e: { id: string }) => e.id));
    const future = await api('/audit/log?since=2999-01-01T00:00:00Z');
    expect(future.body).toEqual({
      entries: [],
      total: 0,
      cursor: null,
      retained: { from_seq: 1, anchor: null },
      partial: false,
    });
    const middle = all.body.entries[3].timestamp as string;
    const until = await api(
      `/audit/log?capability=payments.transfer&event_type=governance.decision&until=${encodeURIComponent(middle)}`,
    );
    // Not vacuous: the entries up to the middle one are there, and none after it.
    const expected = all.body.entries.filter((e: { timestamp: string }) => e.timestamp <= middle);
    expect(expected.length).toBeGreaterThanOrEqual(4);
    expect(until.body.entries.map((e: { id: string }) => e.id)).toEqual(
      expected.map((e: { id: string }) => e.id),
    );
    const actor = await api('/audit/log?actor_id=agent-001&event_type=governance.decision');
    expect(actor.body.total).toBeGreaterThanOrEqual(8);
    const reused = await api(
      `/audit/log?capability=database.query&cursor=${(await api('/audit/log?capability=payments.transfer&limit=1')).body.cursor}`,
    );
    expect(reused.status).toBe(400);
    for (const bad of [
      'since=yesterday',
      'outcome=MAYBE',
      'event_type=nope',
      'limit=500',
      'order=sideways',
    ]) {
      expect((await api(`/audit/log?${bad}`)).status, bad).toBe(400);
    }
  });

  it('returns the trail of one decision with chain_verified', async () => {
    const decision = await propose('database.write', { database: 'production', statement: 'delete from t' });
    const trail = await api(`/audit/log/${decision.body.decision_id}`);
    expect(trail.status).toBe(200);
    expect(trail.body).toMatchObject({
      decision_id: decision.body.decision_id,
      request: {
        actor: { id: 'agent-001' },
        action: { capability: 'database.write' },
        context: { session_id: 's-1' },
      },
      evaluation: {
        capability_check: 'pass',
        authority_check: 'pass',
        risk_score: decision.body.risk_score,
        risk_threshold: 0.8,
        policies_evaluated: ['prod-writes'],
        policy_matched: 'prod-writes',
      },
      decision: {
        outcome: 'REQUIRE_CONFIRMATION',
        reason: decision.body.reason,
        timestamp: decision.body.timestamp,
      },
      execution: null,
      integrity: { chain_verified: true, hash: expect.stringMatching(/^sha256:/) },
    });
    expect((await api('/audit/log/no-such-decision')).status).toBe(404);
  });

  it('lists recent events newest first and decisions with filters', async () => {
    const events = await api('/audit/events?limit=2');
    expect(events.status).toBe(200);
    expect(events.body.events).toHaveLength(2);
    expect(events.body.events[0].seq).toBeGreaterThan(events.body.events[1].seq);
    const decisions = await api('/governance/decisions?capability=payments.transfer&limit=5');
    expect(decisions.body.total).toBe(7);
    expect(decisions.body.decisions).toHaveLength(5);
    expect(decisions.body.decisions[0]).toMatchObject({
      outcome: expect.any(String),
      audit: { status: expect.any(String) },
    });
    const one = await api(`/governance/decisions/${decisions.body.decisions[0].decision_id}`);
    expect(one.body.decision_id).toBe(decisions.body.decisions[0].decision_id);
    expect((await api('/governance/decisions/nope')).status).toBe(404);
    expect((await call(arbiter.url, 'GET', '/api/v1/audit/log', { key: KEYS.agent })).status).toBe(403);
  });

  it('re-verifies after a restart, does not re-record unchanged manifests, and detects a changed byte', async () => {
    const before = await api('/audit/log?limit=1&order=desc');
    const total = before.body.total as number;
    await arbiter.stop();
    arbiter = await startArbiter({ dataDir, manifestsDir });
    const verify = await api('/audit/verify');
    expect(verify.body).toMatchObject({ ok: true, entries_checked: total });
    expect((await api('/audit/log?limit=1')).body.total).toBe(total);

    await arbiter.stop();
    const file = join(dataDir, 'audit.jsonl');
    const lines = (await readFile(file, 'utf8')).split('\n');
    const index = lines.findIndex((l) => l.includes('"outcome":"ALLOW"'));
    const target = (JSON.parse(lines[index]!) as { seq: number }).seq;
    lines[index] = lines[index]!.replace('"outcome":"ALLOW"', '"outcome":"DENY"');
    await writeFile(file, lines.join('\n'));
    arbiter = await startArbiter({ dataDir, manifestsDir });
    const broken = await api('/audit/verify');
    expect(broken.body.ok).toBe(false);
    expect(broken.body.break.seq).toBe(target);
    const last = (await api('/audit/log?limit=1&order=desc&event_type=governance.decision')).body.entries[0];
    const trail = await api(`/audit/log/${last.decision_id}`);
    expect(trail.body.integrity.chain_verified).toBe(false);
  });
});
