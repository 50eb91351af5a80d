import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithControlPlane } from '../env/describe-with-control-plane.js';
import { installCrds } from '../env/install-crds.js';
import { call, removeDir, type ArbiterProcess } from '../support/arbiter-process.js';
import {
  API_BASE,
  PLURAL,
  eventually,
  installControllerRbac,
  object,
  outcomeOf,
  startController,
} from './support/operator-env.js';

/** Bounds a wait for a change to reach the decisions: a hang detector, not a speed target. */
const CHANGE_BOUND_MS = 10_000;

/**
 * The controller against a real kube-apiserver, run as users run it (`arbiter serve
 * --kubeconfig`) under the least-privilege RBAC of deploy/rbac (impersonating its
 * ServiceAccount), driven over HTTP.
 */
describeWithControlPlane('controller: custom resources drive decisions', (controlPlane) => {
  let arbiter: ArbiterProcess;
  const kube = (method: string, path: string, body?: unknown) =>
    controlPlane().request<any>(method, path, body === undefined ? {} : { body });
  const create = async (kind: string, name: string, spec: unknown) => {
    const res = await kube('POST', `${API_BASE}/${PLURAL[kind]}`, object(kind, name, spec));
    expect(res.status, res.text).toBe(201);
    return res.body;
  };
  const read = (kind: string, name: string) => kube('GET', `${API_BASE}/${PLURAL[kind]}/${name}`);
  const readyCondition = async (kind: string, name: string, generation?: number) => {
    const res = await read(kind, name);
    const condition = res.body?.status?.conditions?.find((c: { type: string }) => c.type === 'Ready');
    if (!condition) return undefined;
    if (generation !== undefined && res.body.status.observedGeneration !== generation) return undefined;
    return { ...condition, objectStatus: res.body.status };
  };

  beforeAll(async () => {
    await installCrds(controlPlane());
    const kubeconfig = await installControllerRbac(controlPlane());
    await create('Capability', 'files-read', { name: 'files.read', riskLevel: 'low' });
    arbiter = await startController({ kubeconfig, identity: 'controller-a' });
  });
  afterAll(async () => {
    if (!arbiter) return;
    await arbiter.stop();
    await removeDir(arbiter.dataDir);
  });

  it('is ready once every kind has synced, and serves what was there before it started', async () => {
    const ready = await call(arbiter.url, 'GET', '/readyz');
    expect(ready.status, JSON.stringify(ready.body)).toBe(200);
    expect(ready.body.checks).toContainEqual(expect.objectContaining({ name: 'kubernetes', ready: true }));
    const capabilities = await call(arbiter.url, 'GET', '/api/v1/capabilities', { key: 'dev-admin-key' });
    expect(capabilities.body.capabilities.map((c: { name: string }) => c.name)).toEqual(['files.read']);
  });

  // How soon a change reaches the decisions is for bench/ to measure; here the bound on each
  // wait only stops a change that never arrives.
  it('changes decisions when objects are created, updated and deleted', async () => {
    expect(await outcomeOf(arbiter, 'agent-7', 'files.read')).toBe('DENY');
    await create('ActorGrant', 'agent-7', {
      actor: { id: 'agent-7', type: 'automation' },
      grants: [{ capability: 'files.read' }],
    });
    await eventually(
      'ALLOW',
      async () => ((await outcomeOf(arbiter, 'agent-7', 'files.read')) === 'ALLOW' ? true : undefined),
      CHANGE_BOUND_MS,
    );

    await create('Policy', 'no-secrets', {
      rules: [{ capability: 'files.read', condition: "parameters.path == '/secret'", outcome: 'DENY' }],
    });
    await eventually(
      'DENY for /secret',
      async () =>
        (await outcomeOf(arbiter, 'agent-7', 'files.read', { path: '/secret' })) === 'DENY'
          ? true
          : undefined,
      CHANGE_BOUND_MS,
    );

    const updated = await kube('PATCH', `${API_BASE}/policies/no-secrets`, {
      spec: {
        rules: [{ capability: 'files.read', condition: "parameters.path == '/secret'", outcome: 'ESCALATE' }],
      },
    });
    expect(updated.status, updated.text).toBe(200);
    await eventually(
      'ESCALATE',
      async () =>
        (await outcomeOf(arbiter, 'agent-7', 'files.read', { path: '/secret' })) === 'ESCALATE'
          ? true
          : undefined,
      CHANGE_BOUND_MS,
    );

    expect((await kube('DELETE', `${API_BASE}/policies/no-secrets`)).status).toBe(200);
    await eventually(
      'ALLOW again',
      async () =>
        (await outcomeOf(arbiter, 'agent-7', 'files.read', { path: '/secret' })) === 'ALLOW'
          ? true
          : undefined,
      CHANGE_BOUND_MS,
    );
  });

  it('writes status: observedGeneration, Ready with its reason, counts, and Warning events for rejections', async () => {
    const accepted = await eventually('Accepted', () => readyCondition('ActorGrant', 'agent-7', 1));
    expect(accepted.value).toMatchObject({ status: 'True', reason: 'Accepted', observedGeneration: 1 });
    expect(accepted.value.objectStatus).toMatchObject({ observedGeneration: 1, grantCount: 1 });

    await create('Policy', 'broken', {
      rules: [
        { capability: 'files.read', outcome: 'ALLOW' },
        { capability: 'files.read', condition: 'parameters.path ==', outcome: 'DENY' },
      ],
    });
    const invalid = await eventually('InvalidCondition', () => readyCondition('Policy', 'broken', 1));
    expect(invalid.value).toMatchObject({ status: 'False', reason: 'InvalidCondition' });
    expect(invalid.value.message).toMatch(/rule 1|rules\[1\]/);
    expect(invalid.value.objectStatus.ruleCount).toBe(2);

    await create('Capability', 'files-read-again', { name: 'files.read', riskLevel: 'high' });
    const conflict = await eventually('Conflict', () => readyCondition('Capability', 'files-read-again', 1));
    expect(conflict.value).toMatchObject({ status: 'False', reason: 'Conflict' });
    expect(conflict.value.message).toContain('files.read');
    // The older object keeps the name: decisions still use the low-risk one.
    expect(await outcomeOf(arbiter, 'agent-7', 'files.read')).toBe('ALLOW');

    const events = await eventually('a Warning event for the broken policy', async () => {
      const list = await kube('GET', '/api/v1/namespaces/default/events');
      const found = (list.body.items as any[]).filter(
        (e) => e.involvedObject.kind === 'Policy' && e.involvedObject.name === 'broken',
      );
      return found.length > 0 ? found : undefined;
    });
    expect(events.value[0]).toMatchObject({ type: 'Warning', reason: 'InvalidCondition' });

    // No hot loop: a status that says it already is not written again. Every status pass
    // looks at every object, and passes never overlap: once a second new object has its
    // status, the pass that wrote the first one's has ended, and it would have rewritten this.
    const before = (await read('Policy', 'broken')).body.metadata.resourceVersion;
    for (const [name, capability] of [
      ['sentinel-one', 'sentinel.one'],
      ['sentinel-two', 'sentinel.two'],
    ] as const) {
      await create('Capability', name, { name: capability, riskLevel: 'low' });
      await eventually(`the status of ${name}`, () => readyCondition('Capability', name, 1));
    }
    expect((await read('Policy', 'broken')).body.metadata.resourceVersion).toBe(before);
  });

  it('lands API writes as objects with the caller recorded, answering once the index has them', async () => {
    const api = (method: string, path: string, body?: unknown) =>
      call(arbiter.url, method, `/api/v1${path}`, { key: 'dev-admin-key', ...(body ? { body } : {}) });
    const registered = await api('POST', '/capabilities', { name: 'db.query_rows', risk_level: 'medium' });
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    const capabilityObject = await read('Capability', registered.body.id);
    expect(capabilityObject.status).toBe(200);
    expect(capabilityObject.body.spec).toEqual({ name: 'db.query_rows', riskLevel: 'medium' });
    expect(capabilityObject.body.metadata.annotations['governance.arbiter.dev/changed-by']).toBe('admin');

    const granted = await api('POST', '/actors/agent-9/grants', { capability: 'db.query_rows' });
    expect(granted.status, JSON.stringify(granted.body)).toBe(201);
    // Read-your-writes: the very next decision sees the grant.
    expect(await outcomeOf(arbiter, 'agent-9', 'db.query_rows')).toBe('ALLOW');

    const created = await api('POST', '/policies', {
      name: 'rows-limit',
      rules: [{ capability: 'db.query_rows', condition: 'parameters.rows > 100', outcome: 'DENY' }],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(await outcomeOf(arbiter, 'agent-9', 'db.query_rows', { rows: 500 })).toBe('DENY');
    const updated = await api('PUT', '/policies/rows-limit', {
      rules: [{ capability: 'db.query_rows', condition: 'parameters.rows > 1000', outcome: 'DENY' }],
    });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(await outcomeOf(arbiter, 'agent-9', 'db.query_rows', { rows: 500 })).toBe('ALLOW');
    const policyObject = await read('Policy', 'rows-limit');
    expect(policyObject.body.metadata.generation).toBe(2);
    expect(policyObject.body.metadata.annotations['governance.arbiter.dev/changed-by']).toBe('admin');

    expect((await api('POST', '/policies', { name: 'rows-limit', rules: [] })).body.error.code).toBe(
      'CONFLICT',
    );
    const badCondition = await api('POST', '/policies', {
      name: 'bad',
      rules: [{ capability: 'db.query_rows', condition: 'rows >', outcome: 'DENY' }],
    });
    expect(badCondition.status).toBe(400);
    expect((await read('Policy', 'bad')).status).toBe(404);
    expect((await api('PUT', '/policies/nope', { rules: [] })).body.error.code).toBe('NOT_FOUND');

    const grantName = granted.body.id as string;
    expect((await read('ActorGrant', grantName)).body.spec.actor.id).toBe('agent-9');
    const revoked = await api('DELETE', '/actors/agent-9/grants/db.query_rows');
    expect(revoked.status, JSON.stringify(revoked.body)).toBeLessThan(300);
    expect((await read('ActorGrant', grantName)).status).toBe(404);
    expect(await outcomeOf(arbiter, 'agent-9', 'db.query_rows')).toBe('DENY');
    // The revoke deleted the emptied object; its audit event still names the API caller.
    const audited = await eventually('the revocation in the audit log', async () => {
      const log = await api('GET', '/audit/log?event_type=actor.grant.revoked&actor_id=agent-9');
      return log.body.entries?.[0];
    });
    expect(audited.value).toMatchObject({
      capability: 'db.query_rows',
      data: { change: 'deleted', changed_by: 'admin', kind: 'ActorGrant', name: grantName },
    });
  });

  it('deletes policies and capabilities through the API as the caller, refusing a capability still in use', async () => {
    const api = (method: string, path: string, body?: unknown) =>
      call(arbiter.url, method, `/api/v1${path}`, { key: 'dev-admin-key', ...(body ? { body } : {}) });
    const registered = await api('POST', '/capabilities', { name: 'db.drop_rows', risk_level: 'medium' });
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    await api('POST', '/actors/agent-10/grants', { capability: 'db.drop_rows' });
    const policy = await api('POST', '/policies', {
      name: 'drop-guard',
      rules: [{ capability: 'db.drop_rows', condition: 'parameters.rows > 10', outcome: 'DENY' }],
    });
    expect(policy.status, JSON.stringify(policy.body)).toBe(201);

    const inUse = await api('DELETE', '/capabilities/db.drop_rows');
    expect(inUse.status).toBe(409);
    expect(inUse.body.error.message).toContain('agent-10');
    expect(inUse.body.error.message).toContain('drop-guard rule 0');
    expect((await read('Capability', registered.body.id)).status).toBe(200);

    expect((await api('DELETE', '/actors/agent-10/grants/db.drop_rows')).status).toBe(200);
    const policyDeleted = await api('DELETE', '/policies/drop-guard');
    expect(policyDeleted.status, JSON.stringify(policyDeleted.body)).toBe(200);
    expect((await read('Policy', 'drop-guard')).status).toBe(404);
    // Read-your-writes: the index no longer has it when the answer comes.
    expect((await api('GET', '/policies/drop-guard')).status).toBe(404);
    expect((await api('DELETE', '/policies/drop-guard')).status).toBe(404);

    const deleted = await api('DELETE', '/capabilities/db.drop_rows');
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
    expect(deleted.body).toEqual({ name: 'db.drop_rows', deleted: true, objects: [registered.body.id] });
    expect((await read('Capability', registered.body.id)).status).toBe(404);
    const names = (await api('GET', '/capabilities')).body.capabilities.map((c: { name: string }) => c.name);
    expect(names).not.toContain('db.drop_rows');

    // The leader audits both deletions with the API caller, carried by the deleted-by mark.
    for (const [eventType, name] of [
      ['policy.deleted', 'drop-guard'],
      ['capability.deleted', registered.body.id],
    ]) {
      const audited = await eventually(eventType, async () => {
        const log = await api('GET', `/audit/log?event_type=${eventType}`);
        return log.body.entries?.find((e: { data: { name: string } }) => e.data.name === name);
      });
      expect(audited.value.data).toMatchObject({ change: 'deleted', changed_by: 'admin', object: null });
    }
  });

  it('survives an API server restart: decisions keep flowing, then it resyncs', async () => {
    expect(await outcomeOf(arbiter, 'agent-7', 'files.read')).toBe('ALLOW');
    await controlPlane().stopApiServer();
    try {
      // Once the controller knows its watches are broken, the last good index keeps serving;
      // readiness stays true on purpose (see README).
      const { value: metrics } = await eventually('the broken Policy watch in the metrics', async () => {
        const text = await (await fetch(`${arbiter.url}/metrics`)).text();
        return /arbiter_watch_broken\{kind="Policy"\} 1/.test(text) ? text : undefined;
      });
      expect(metrics).toMatch(/arbiter_leader 1/);
      for (let i = 0; i < 5; i++) expect(await outcomeOf(arbiter, 'agent-7', 'files.read')).toBe('ALLOW');
      const ready = await call(arbiter.url, 'GET', '/readyz');
      expect(ready.status).toBe(200);
      const write = await call(arbiter.url, 'POST', '/api/v1/policies', {
        key: 'dev-admin-key',
        body: { name: 'during-outage', rules: [] },
      });
      expect(write.status).toBe(503);
      expect(write.body.error.code).toBe('UNAVAILABLE');
    } finally {
      await controlPlane().startApiServer();
    }
    // A change right after the restart shows up, and so does a deletion.
    expect((await kube('DELETE', `${API_BASE}/actorgrants/agent-7`)).status).toBe(200);
    await create('Policy', 'after-restart', { rules: [{ capability: 'files.read', outcome: 'ESCALATE' }] });
    const policyNames = async () =>
      (await call(arbiter.url, 'GET', '/api/v1/policies', { key: 'dev-admin-key' })).body.policies.map(
        (p: { name: string }) => p.name,
      );
    await eventually(
      'the changes made after the restart',
      async () =>
        (await outcomeOf(arbiter, 'agent-7', 'files.read')) === 'DENY' &&
        (await policyNames()).includes('after-restart')
          ? true
          : undefined,
      45_000,
    );
    expect(arbiter.logs.join('\n')).toContain('watch restored and resynced');
    const metrics = await (await fetch(`${arbiter.url}/metrics`)).text();
    expect(metrics).toMatch(/arbiter_watch_broken\{kind="Policy"\} 0/);
    expect(Number(/arbiter_watch_restarts_total\{kind="Policy"\} (\d+)/.exec(metrics)?.[1])).toBeGreaterThan(
      0,
    );
  }, 90_000);
});
