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
import { TEAM_MANIFESTS } from '../support/team-manifests.js';

/** The example keys plus a key limited to team-a that may manage policies and grants. */
const KEYS_FILE = `keys:
  - {name: admin, key: ${KEYS.admin}, scopes: [admin]}
  - {name: auditor, key: ${KEYS.auditor}, scopes: [audit:read, governance:read]}
  - name: team-a-ops
    key: team-a-ops-key
    scopes: [governance:read, policies:manage, grants:manage]
    namespaces: [team-a]
`;
const TEAM_A = 'team-a-ops-key';

let arbiter: ArbiterProcess;
let dataDir: string;
let manifestsDir: string;
const api = (method: string, path: string, body?: unknown, key: string = TEAM_A) =>
  call(arbiter.url, method, `/api/v1${path}`, { key, ...(body === undefined ? {} : { body }) });
const lastEntry = async (eventType: string) =>
  (await api('GET', `/audit/log?event_type=${eventType}&order=desc&limit=1`, undefined, KEYS.auditor)).body
    .entries[0];
const apiObjects = async () =>
  JSON.parse(await readFile(join(dataDir, 'api-objects.json'), 'utf8')) as Array<{
    kind: string;
    metadata: { name: string; namespace?: string };
    spec: any;
  }>;

const RULES = [{ capability: 'email.send', condition: "parameters.subject == 'x'", outcome: 'DENY' }];

beforeAll(async () => {
  dataDir = await tempDir();
  manifestsDir = await tempManifests();
  await writeFile(join(manifestsDir, 'teams.yaml'), TEAM_MANIFESTS);
  const keysFile = join(dataDir, 'keys.yaml');
  await writeFile(keysFile, KEYS_FILE);
  arbiter = await startArbiter({ dataDir, manifestsDir, apiKeys: keysFile });
});
afterAll(async () => {
  await arbiter?.stop();
  await removeDir(dataDir);
  await removeDir(manifestsDir);
});

describe('namespaced policies', () => {
  it("lets a team-a key create, read, list, update and delete team-a's policies, audited with the caller", async () => {
    const created = await api('POST', '/namespaces/team-a/policies', { name: 'quiet', rules: RULES });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({
      id: 'quiet',
      name: 'quiet',
      namespace: 'team-a',
      enabled: true,
      rules: RULES,
      status: { ready: true },
    });
    const entry = await lastEntry('policy.created');
    expect(entry).toMatchObject({ actor_id: 'team-a-ops', namespace: 'team-a' });

    const stored = (await apiObjects()).find((o) => o.kind === 'NamespacedPolicy');
    expect(stored?.metadata).toMatchObject({ name: 'quiet', namespace: 'team-a' });

    const list = await api('GET', '/namespaces/team-a/policies');
    expect(list.status).toBe(200);
    expect(list.body.policies.map((p: any) => p.name)).toEqual(['mail', 'quiet']);
    expect(list.body.total).toBe(2);
    const page = await api('GET', '/namespaces/team-a/policies?limit=1');
    const next = await api('GET', `/namespaces/team-a/policies?limit=1&cursor=${page.body.cursor}`);
    expect([...page.body.policies, ...next.body.policies].map((p: any) => p.name)).toEqual(['mail', 'quiet']);

    expect((await api('GET', '/namespaces/team-a/policies/quiet')).body).toMatchObject({
      namespace: 'team-a',
    });
    expect((await api('GET', '/namespaces/team-a/policies/nothing')).status).toBe(404);

    const updated = await api('PUT', '/namespaces/team-a/policies/quiet', { rules: RULES, enabled: false });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(updated.body.enabled).toBe(false);
    expect(await lastEntry('policy.updated')).toMatchObject({ actor_id: 'team-a-ops', namespace: 'team-a' });

    const deleted = await api('DELETE', '/namespaces/team-a/policies/quiet');
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ id: 'quiet', deleted: true });
    expect(await lastEntry('policy.deleted')).toMatchObject({ actor_id: 'team-a-ops', namespace: 'team-a' });
    expect((await api('GET', '/namespaces/team-a/policies/quiet')).status).toBe(404);
  });

  it('tells one name in two namespaces and the cluster apart', async () => {
    for (const ns of ['team-a', 'team-b']) {
      const res = await api('POST', `/namespaces/${ns}/policies`, { name: 'twin', rules: RULES }, KEYS.admin);
      expect(res.status, JSON.stringify(res.body)).toBe(201);
    }
    const cluster = await api('POST', '/policies', { name: 'twin', rules: RULES }, KEYS.admin);
    expect(cluster.status, JSON.stringify(cluster.body)).toBe(201);
    const again = await api('POST', '/namespaces/team-a/policies', { name: 'twin', rules: RULES });
    expect(again.status).toBe(409);
    expect((await api('DELETE', '/namespaces/team-b/policies/twin', undefined, KEYS.admin)).status).toBe(200);
    expect((await api('GET', '/namespaces/team-a/policies/twin')).status).toBe(200);
    expect((await api('GET', '/policies/twin', undefined, KEYS.admin)).status).toBe(200);
    const kept = (await apiObjects()).map(
      (o) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`,
    );
    expect(kept.sort()).toEqual(['NamespacedPolicy/team-a/twin', 'Policy//twin']);
  });

  it("refuses a manifest's namespaced policy (409)", async () => {
    const res = await api('PUT', '/namespaces/team-a/policies/mail', { rules: RULES });
    expect(res.status).toBe(409);
    expect(res.body.error.message).toContain('manifest');
  });

  it("refuses a team-a key team-b's policies and the cluster policies (403)", async () => {
    const other = await api('POST', '/namespaces/team-b/policies', { name: 'sneak', rules: RULES });
    expect(other.status).toBe(403);
    expect(other.body.error.code).toBe('FORBIDDEN');
    expect((await api('DELETE', '/namespaces/team-b/policies/mail')).status).toBe(403);
    expect((await api('GET', '/namespaces/team-b/policies')).status).toBe(403);
    const cluster = await api('POST', '/policies', { name: 'sneak', rules: RULES });
    expect(cluster.status).toBe(403);
    expect(cluster.body.error.code).toBe('FORBIDDEN');
    expect((await api('POST', '/actors/x/grants', { capability: 'email.send' })).status).toBe(403);
  });

  it('answers an invalid namespace name with 400', async () => {
    for (const ns of ['Team_A', 'a'.repeat(64), '-x']) {
      const res = await api('GET', `/namespaces/${ns}/policies`, undefined, KEYS.admin);
      expect(res.status, ns).toBe(400);
      expect(res.body.error.code).toBe('INVALID_REQUEST');
      expect(res.body.error.message).toContain('namespace');
    }
  });
});

describe('namespaced actor grants', () => {
  it("grants, lists and revokes a team-a actor's capabilities; outside the Delegation is visible", async () => {
    const granted = await api('POST', '/namespaces/team-a/actors/helper/grants', {
      capability: 'email.send',
    });
    expect(granted.status, JSON.stringify(granted.body)).toBe(201);
    expect(granted.body).toMatchObject({
      actor_id: 'team-a/helper',
      capability: 'email.send',
      status: { ready: true },
    });
    expect(granted.body.status.outside_delegation).toBeUndefined();
    expect(await lastEntry('actor.grant.created')).toMatchObject({
      actor_id: 'team-a/helper',
      namespace: 'team-a',
    });
    const stored = (await apiObjects()).find((o) => o.kind === 'NamespacedActorGrant');
    expect(stored).toMatchObject({ metadata: { namespace: 'team-a' }, spec: { actor: { id: 'helper' } } });

    const outside = await api('POST', '/namespaces/team-a/actors/helper/grants', {
      capability: 'deploy.production',
    });
    expect(outside.status, JSON.stringify(outside.body)).toBe(201);
    expect(outside.body.status.outside_delegation).toContain('deploy.production');

    const list = await api('GET', '/namespaces/team-a/actors/helper/grants');
    expect(list.status).toBe(200);
    expect(list.body.actor_id).toBe('team-a/helper');
    expect(list.body.grants.map((g: any) => g.capability)).toEqual(['deploy.production', 'email.send']);

    const revoked = await api('DELETE', '/namespaces/team-a/actors/helper/grants/email.send');
    expect(revoked.status).toBe(200);
    expect(revoked.body).toEqual({ actor_id: 'team-a/helper', capability: 'email.send', revoked: 1 });
    expect(await lastEntry('actor.grant.revoked')).toMatchObject({ actor_id: 'team-a/helper' });
    const again = await api('DELETE', '/namespaces/team-a/actors/helper/grants/email.send');
    expect(again.status).toBe(404);
  });

  it("refuses a team-a key team-b's actors (403) and bad local ids (400)", async () => {
    const other = await api('POST', '/namespaces/team-b/actors/bot/grants', { capability: 'email.send' });
    expect(other.status).toBe(403);
    expect((await api('DELETE', '/namespaces/team-b/actors/bot/grants/email.send')).status).toBe(403);
    const long = await api('POST', `/namespaces/team-a/actors/${'b'.repeat(250)}/grants`, {
      capability: 'email.send',
    });
    expect(long.status).toBe(400);
    expect(long.body.error.code).toBe('INVALID_REQUEST');
  });

  it('refuses a grant of the manifest (409) without touching it', async () => {
    const res = await api('DELETE', '/namespaces/team-a/actors/bot/grants/email.send');
    expect(res.status).toBe(409);
  });
});
