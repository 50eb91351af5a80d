import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../audit/chain.js';
import {
  capabilityOf,
  parametersOf,
  proposalOf,
  requestDataOf,
  requestFingerprint,
} from './kubernetes-request.js';
import { configMapRequest, PLANNER } from './test-requests.js';

describe('capabilityOf', () => {
  it.each([
    [{}, 'k8s.configmaps.create'],
    [{ operation: 'DELETE' as const }, 'k8s.configmaps.delete'],
    [
      {
        resource: { group: 'apps', version: 'v1', resource: 'deployments' },
        subResource: 'scale',
        operation: 'UPDATE' as const,
      },
      'k8s.deployments.scale.update',
    ],
    [
      {
        resource: { group: '', version: 'v1', resource: 'pods' },
        subResource: 'exec',
        operation: 'CONNECT' as const,
      },
      'k8s.pods.exec.connect',
    ],
  ])('names %j as %s', (overrides, expected) => {
    expect(capabilityOf(configMapRequest(overrides))).toBe(expected);
  });
});

describe('parametersOf', () => {
  it('carries what policies test, objects without managedFields', () => {
    const params = parametersOf(
      configMapRequest({ operation: 'UPDATE', oldObject: configMapRequest().object, dryRun: true }),
    );
    expect(params).toMatchObject({
      operation: 'update',
      group: '',
      version: 'v1',
      resource: 'configmaps',
      subresource: '',
      kind: 'ConfigMap',
      namespace: 'agents-sandbox',
      name: 'settings',
      dry_run: true,
      username: PLANNER,
    });
    const object = params.object as { metadata: Record<string, unknown>; data: unknown };
    expect(object.metadata).not.toHaveProperty('managedFields');
    expect(object.metadata.labels).toEqual({ app: 'x' });
    expect(object.data).toEqual({ mode: 'fast' });
    expect((params.old_object as { metadata: object }).metadata).not.toHaveProperty('managedFields');
  });

  it('gives null objects for a delete and empty strings for a cluster-scoped name-less request', () => {
    const params = parametersOf(
      configMapRequest({ operation: 'DELETE', object: null, namespace: undefined }),
    );
    expect(params.object).toBeNull();
    expect(params.old_object).toBeNull();
    expect(params.namespace).toBe('');
  });

  it('gives empty strings for a request without name, subresource or username', () => {
    const params = parametersOf(configMapRequest({ name: undefined, userInfo: {} }));
    expect(params).toMatchObject({ name: '', subresource: '', username: '' });
  });

  it('passes an object without metadata through as it is', () => {
    const object = { apiVersion: 'v1', kind: 'ConfigMap', data: { mode: 'fast' } };
    expect(parametersOf(configMapRequest({ object })).object).toEqual(object);
  });
});

describe('requestDataOf', () => {
  it('shows the request in the audit trail, lower-case operation and its fingerprint', () => {
    const request = configMapRequest({
      resource: { group: 'apps', version: 'v1', resource: 'deployments' },
      subResource: 'scale',
      operation: 'UPDATE',
    });
    expect(requestDataOf(request)).toStrictEqual({
      uid: 'a1b2c3',
      username: PLANNER,
      operation: 'update',
      group: 'apps',
      version: 'v1',
      resource: 'deployments',
      subresource: 'scale',
      namespace: 'agents-sandbox',
      name: 'settings',
      fingerprint: requestFingerprint(request),
    });
  });

  it('shows empty strings for what a cluster-scoped, anonymous request lacks', () => {
    const data = requestDataOf(configMapRequest({ name: undefined, namespace: undefined, userInfo: {} }));
    expect(data).toMatchObject({ username: '', subresource: '', namespace: '', name: '' });
  });
});

describe('proposalOf', () => {
  it('proposes for the bound actor, with its type or automation', () => {
    const binding = { username: PLANNER, actorId: 'agent-7', actorType: undefined, source: 'g' };
    expect(proposalOf(configMapRequest(), binding).actor).toEqual({ id: 'agent-7', type: 'automation' });
    expect(proposalOf(configMapRequest(), { ...binding, actorType: 'ai-agent' }).actor.type).toBe('ai-agent');
  });
});

describe('requestFingerprint', () => {
  const base = requestFingerprint(configMapRequest());
  const withObject = (change: (o: Record<string, any>) => void) => {
    const request = configMapRequest();
    const object = structuredClone(request.object) as Record<string, any>;
    change(object);
    return requestFingerprint({ ...request, object });
  };

  it('ignores what changes between tries: resourceVersion, uid, generation, timestamps, managedFields, status', () => {
    expect(
      withObject((o) => {
        o.metadata.resourceVersion = '99';
        o.metadata.uid = 'u-2';
        o.metadata.generation = 4;
        o.metadata.creationTimestamp = '2030-01-01T00:00:00Z';
        o.metadata.managedFields = [];
        o.status = { phase: 'x' };
      }),
    ).toBe(base);
    expect(requestFingerprint({ ...configMapRequest(), uid: 'other-review', dryRun: true })).toBe(base);
    expect(requestFingerprint({ ...configMapRequest(), oldObject: { kind: 'ConfigMap' } })).toBe(base);
  });

  it('differs for another identity, target, operation or content', () => {
    const others = [
      requestFingerprint(configMapRequest({ userInfo: { username: 'system:serviceaccount:agents:other' } })),
      requestFingerprint(configMapRequest({ name: 'other' })),
      requestFingerprint(configMapRequest({ namespace: 'prod' })),
      requestFingerprint(configMapRequest({ operation: 'UPDATE' })),
      requestFingerprint(configMapRequest({ subResource: 'status' })),
      withObject((o) => (o.data.mode = 'slow')),
      withObject((o) => (o.metadata.labels.app = 'y')),
    ];
    for (const other of others) expect(other).not.toBe(base);
    expect(new Set(others).size).toBe(others.length);
  });

  it('copes with hostile keys in objects (a ConfigMap may hold a "__proto__" key)', () => {
    const hostile = JSON.parse(
      '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","__proto__":{"polluted":1}},"data":{"__proto__":"a","constructor":"b"}}',
    ) as Record<string, unknown>;
    const request = configMapRequest({ object: hostile });
    expect(() => requestFingerprint(request)).not.toThrow();
    expect(parametersOf(request).object).toEqual(hostile);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('hashes exactly the identity, target and content (approvals stored before an upgrade must still match)', () => {
    const request = configMapRequest({
      resource: { group: '', version: 'v1', resource: 'namespaces' },
      kind: { group: '', version: 'v1', kind: 'Namespace' },
      name: undefined,
      namespace: undefined,
      userInfo: {},
      object: { apiVersion: 'v1', kind: 'Namespace', spec: { finalizers: ['kubernetes'] } },
    });
    const identity = {
      username: '',
      operation: 'CREATE',
      group: '',
      resource: 'namespaces',
      subresource: '',
      namespace: '',
      name: '',
      object: { apiVersion: 'v1', kind: 'Namespace', spec: { finalizers: ['kubernetes'] } },
    };
    const expected = createHash('sha256').update(canonicalJson(identity)).digest('hex');
    expect(requestFingerprint(request)).toBe(expected);
    expect(requestFingerprint({ ...request, object: { ...request.object, metadata: null } })).toBe(expected);
  });
});
