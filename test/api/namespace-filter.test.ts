import { writeFile } from 'node:fs/promises';
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
import { teamGrantsYaml } from '../support/team-grants.js';

const TEAM_GRANTS = teamGrantsYaml(['team-a/bot', 'team-a/other', 'team-b/bot'], 'database.query');

let arbiter: ArbiterProcess;
let dataDir: string;
let manifestsDir: string;
const api = (path: string, key: string = KEYS.auditor) => call(arbiter.url, 'GET', `/api/v1${path}`, { key });
const propose = (id: string, key: string = KEYS.admin) =>
  call(arbiter.url, 'POST', '/api/v1/governance/propose', {
    key,
    body: {
      actor: { id, type: 'automation' },
      action: { capability: 'database.query', parameters: { query: 'select 1' } },
    },
  });
const decisionIds: Record<string, string[]> = {};

beforeAll(async () => {
  dataDir = await tempDir();
  manifestsDir = await tempManifests();
  await writeFile(join(manifestsDir, 'team-grants.yaml'), TEAM_GRANTS);
  arbiter = await startArbiter({ dataDir, manifestsDir });
  for (const id of ['team-a/bot', 'agent-001', 'team-b/bot', 'team-a/other', 'team-a/bot']) {
    const decided = await propose(id);
    expect(decided.status, JSON.stringify(decided.body)).toBe(200);
    (decisionIds[id] ??= []).push(decided.body.decision_id);
  }
});
afterAll(async () => {
  await arbiter.stop();
  await removeDir(dataDir);
  await removeDir(manifestsDir);
});

/** Every page of a list, following its cursors; the total each page reports. */
async function allPages(path: string, plural: string): Promise<{ items: any[]; totals: number[] }> {
  const items: any[] = [];
  const totals: number[] = [];
  let cursor: string | null = null;
  do {
    const sep = path.includes('?') ? '&' : '?';
    const page = await api(`${path}${sep}limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    items.push(...page.body[plural]);
    totals.push(page.body.total);
    cursor = page.body.cursor;
  } while (cursor !== null);
  return { items, totals };
}

describe('namespace of decisions and audit entries', () => {
  it("writes a namespaced actor's namespace into its entries, hashed with them; cluster actors' entries have none", async () => {
    const page = await api('/audit/log?event_type=governance.decision');
    const byActor = page.body.entries.map((e: any) => [e.actor_id, e.namespace]);
    expect(byActor.sort()).toEqual(
      [
        ['agent-001', undefined],
        ['team-a/bot', 'team-a'],
        ['team-a/bot', 'team-a'],
        ['team-a/other', 'team-a'],
        ['team-b/bot', 'team-b'],
      ].sort(),
    );
    expect((await api('/audit/verify')).body.ok).toBe(true);
  });

  it('filters /audit/log by namespace with the other filters, exact totals and cursors', async () => {
    const teamA = await allPages('/audit/log?namespace=team-a&event_type=governance.decision', 'entries');
    expect(teamA.items.map((e) => e.actor_id)).toEqual(['team-a/bot', 'team-a/other', 'team-a/bot']);
    expect(teamA.totals).toEqual([3, 3, 3]);
    const one = await allPages(
      '/audit/log?namespace=team-a&actor_id=team-a/bot&event_type=governance.decision&order=desc',
      'entries',
    );
    expect(one.items.map((e) => e.decision_id)).toEqual([...decisionIds['team-a/bot']!].reverse());
    expect(one.totals).toEqual([2, 2]);
    expect((await api('/audit/log?namespace=team-b&actor_id=team-a/bot')).body.total).toBe(0);
    // A cursor belongs to its filters.
    const first = await api('/audit/log?namespace=team-a&limit=1');
    expect((await api(`/audit/log?namespace=team-b&limit=1&cursor=${first.body.cursor}`)).status).toBe(400);
  });

  it('filters /governance/decisions by namespace, and each decision names its namespace', async () => {
    const teamA = await allPages('/governance/decisions?namespace=team-a', 'decisions');
    expect(teamA.items.map((d) => d.decision_id).sort()).toEqual(
      [...decisionIds['team-a/bot']!, ...decisionIds['team-a/other']!].sort(),
    );
    expect(teamA.totals).toEqual([3, 3, 3]);
    expect(teamA.items.every((d) => d.namespace === 'team-a')).toBe(true);
    const teamB = await api('/governance/decisions?namespace=team-b&capability=database.query');
    expect(teamB.body.decisions.map((d: any) => d.audit.actor_id)).toEqual(['team-b/bot']);
    const cluster = await api(`/governance/decisions/${decisionIds['agent-001']![0]}`);
    expect(cluster.body.namespace).toBeNull();
    const first = await api('/governance/decisions?namespace=team-a&limit=1');
    expect((await api(`/governance/decisions?limit=1&cursor=${first.body.cursor}`)).status).toBe(400);
  });

  it('names the namespace and the tier in the trail', async () => {
    const trail = await api(`/audit/log/${decisionIds['team-a/bot']![0]}`);
    expect(trail.body).toMatchObject({ namespace: 'team-a', evaluation: { tier: 'cluster' } });
    const cluster = await api(`/audit/log/${decisionIds['agent-001']![0]}`);
    expect(cluster.body.namespace).toBeNull();
    // Denied at the gate, no tier's policies were asked.
    const { authority_check, tier } = cluster.body.evaluation;
    expect(tier).toBe(authority_check === 'pass' ? 'cluster' : null);
  });

  it('refuses a namespace that is no namespace name with a 400', async () => {
    for (const path of [
      '/audit/log?namespace=Team_A',
      '/governance/decisions?namespace=a/b',
      '/audit/log?namespace=',
    ])
      expect((await api(path)).status, path).toBe(400);
  });
});
