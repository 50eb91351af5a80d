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
import { TEAM_MANIFESTS } from '../support/team-manifests.js';

/** An object written through the API earlier (the data directory's file), in a third namespace. */
const API_OBJECTS = [
  {
    apiVersion: 'governance.arbiter.dev/v1alpha1',
    kind: 'NamespacedPolicy',
    metadata: { name: 'mail', namespace: 'team-c', uid: '7d0c1f0e-0000-4000-8000-000000000001' },
    spec: { rules: [{ capability: 'email.send', outcome: 'DENY' }] },
  },
];

let arbiter: ArbiterProcess;

beforeAll(async () => {
  const manifestsDir = await tempManifests();
  await writeFile(join(manifestsDir, 'teams.yaml'), TEAM_MANIFESTS);
  const dataDir = await tempDir();
  await writeFile(join(dataDir, 'api-objects.json'), JSON.stringify(API_OBJECTS));
  arbiter = await startArbiter({ manifestsDir, dataDir });
});

afterAll(async () => {
  if (!arbiter?.child) return;
  await arbiter.stop();
  await removeDir(arbiter.dataDir);
  await removeDir(arbiter.manifestsDir);
});

interface Decision {
  decision_id: string;
  outcome: string;
}

async function propose(actorId: string, capability: string, parameters: Record<string, unknown>) {
  const res = await call(arbiter.url, 'POST', '/api/v1/governance/propose', {
    key: KEYS.admin,
    body: { actor: { id: actorId, type: 'ai-agent' }, action: { capability, parameters } },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const decision = res.body as Decision;
  const entries = await call(arbiter.url, 'GET', `/api/v1/audit/log?decision_id=${decision.decision_id}`, {
    key: KEYS.admin,
  });
  const [entry] = (entries.body as { entries: Array<{ data: unknown }> }).entries;
  return { ...decision, entry: JSON.stringify(entry) };
}

describe('embedded mode: the tenancy kinds in the manifests folder and the API file', () => {
  it("decides a namespaced actor through its namespace's objects", async () => {
    const held = await propose('team-a/bot', 'email.send', { to: 'a@example.com', subject: 'hold' });
    expect(held.outcome).toBe('ESCALATE');
    expect(held.entry).toContain('"policy_matched":"team-a/mail"');
    expect(held.entry).toContain('"tier":"namespace"');

    const plain = await propose('team-a/bot', 'email.send', { to: 'a@example.com', subject: 'hi' });
    expect(plain.outcome).toBe('ALLOW');
  });

  it('keeps one name in two namespaces apart, and gates grants by the Delegation', async () => {
    const teamB = await propose('team-b/bot', 'email.send', { to: 'a@example.com', subject: 'hi' });
    expect(teamB.outcome).toBe('DENY');
    expect(teamB.entry).toContain('no_delegation');
    const risky = await propose('team-a/bot', 'deploy.production', { service: 'web', version: 'v2' });
    expect(risky.outcome).toBe('DENY');
    expect(risky.entry).toContain('outside_delegation');
  });

  it('audits the namespaced objects of both sources, each with its namespace', async () => {
    const res = await call(arbiter.url, 'GET', '/api/v1/audit/log?event_type=policy.created&limit=100', {
      key: KEYS.admin,
    });
    type Entry = { namespace?: string; actor_id: string; data: { kind: string; name: string } };
    const created = (res.body as { entries: Entry[] }).entries
      .filter((e) => e.data.kind === 'NamespacedPolicy')
      .map((e) => `${e.namespace}/${e.data.name}`)
      .sort();
    expect(created).toEqual(['team-a/mail', 'team-b/mail', 'team-c/mail']);

    const grants = await call(
      arbiter.url,
      'GET',
      '/api/v1/audit/log?event_type=actor.grant.created&limit=100',
      {
        key: KEYS.admin,
      },
    );
    const namespaced = (grants.body as { entries: Entry[] }).entries.filter(
      (e) => e.data.kind === 'NamespacedActorGrant',
    );
    expect(namespaced.map((e) => [e.namespace, e.actor_id]).sort()).toEqual([
      ['team-a', 'team-a/bot'],
      ['team-a', 'team-a/bot'],
      ['team-b', 'team-b/bot'],
    ]);
    const delegations = await call(arbiter.url, 'GET', '/api/v1/audit/log?event_type=delegation.created', {
      key: KEYS.admin,
    });
    const [delegation] = (delegations.body as { entries: Entry[] }).entries;
    expect(delegation).toMatchObject({ data: { kind: 'Delegation', name: 'team-a' } });
    expect(delegation).not.toHaveProperty('namespace');
  });

  it('counts the tenancy kinds in /metrics', async () => {
    const metrics = await (await fetch(`${arbiter.url}/metrics`)).text();
    const objects = (kind: string) =>
      new RegExp(`^arbiter_index_objects\\{kind="${kind}"\\} (\\d+)$`, 'm').exec(metrics)?.[1];
    // team-a's Delegation; mail in team-a, team-b and (written through the API) team-c; both bots.
    expect(objects('Delegation')).toBe('1');
    expect(objects('NamespacedPolicy')).toBe('3');
    expect(objects('NamespacedActorGrant')).toBe('2');
  });
});
