import { describe, expect, it } from 'vitest';
import { ApiKeyRegistry } from './api-keys.js';
import {
  kubernetesPrincipal,
  kubernetesPrincipalName,
  proposerNames,
  serviceAccountOfUser,
} from './kubernetes-principal.js';
import type { Principal } from './scopes.js';

const SA_GROUPS = ['system:serviceaccounts', 'system:serviceaccounts:agents', 'system:authenticated'];

describe('Kubernetes users as principals', () => {
  it.each([
    ['system:serviceaccount:agents:planner', 'agents/planner'],
    ['system:serviceaccount:agents:planner:extra', undefined],
    ['system:serviceaccount:agents', undefined],
    ['system:serviceaccount::planner', undefined],
    ['oidc:system:serviceaccount:agents:planner', undefined],
    ['alice', undefined],
  ])('%s is the ServiceAccount %s', (username, account) => {
    expect(serviceAccountOfUser(username)).toBe(account);
  });

  it('names a ServiceAccount as its keys file entry and actor binding do, anyone else by username', () => {
    expect(kubernetesPrincipalName('system:serviceaccount:agents:planner')).toBe(
      'serviceaccount:agents/planner',
    );
    expect(kubernetesPrincipalName('alice@example.com')).toBe('kubernetes:alice@example.com');
    expect(kubernetesPrincipalName('oidc:system:serviceaccount:a:b')).toBe(
      'kubernetes:oidc:system:serviceaccount:a:b',
    );
    const listed = ApiKeyRegistry.fromDocument({
      keys: [],
      serviceAccounts: [{ namespace: 'agents', name: 'planner', scopes: ['governance:propose'] }],
    }).serviceAccounts.get('agents/planner')!;
    expect(kubernetesPrincipalName('system:serviceaccount:agents:planner')).toBe(listed.name);
  });

  it('keeps the scopes and actors of a known principal and adds the user', () => {
    const known: Principal = {
      name: 'serviceaccount:agents/planner',
      scopes: new Set(['governance:propose']),
      actors: new Set(['agent-1']),
    };
    const user = { username: 'system:serviceaccount:agents:planner', groups: SA_GROUPS };
    const principal = kubernetesPrincipal(user, known);
    expect(principal).toEqual({ ...known, kubernetes: user });
    expect(known.kubernetes).toBeUndefined(); // the directory's principal is not changed
  });

  it('gives a user Arbiter knows nothing about no scope at all', () => {
    const user = { username: 'alice', groups: ['reviewers'] };
    expect(kubernetesPrincipal(user, undefined)).toEqual({
      name: 'kubernetes:alice',
      scopes: new Set(),
      kubernetes: user,
    });
  });

  it('knows every name its decisions record: the API, and the admission webhook for a Kubernetes user', () => {
    const key: Principal = { name: 'reviewer', scopes: new Set(['governance:review']) };
    expect(proposerNames(key)).toEqual(['reviewer']);
    const planner = kubernetesPrincipal(
      { username: 'system:serviceaccount:agents:planner', groups: SA_GROUPS },
      undefined,
    );
    expect(proposerNames(planner)).toEqual([
      'serviceaccount:agents/planner',
      'kubernetes:system:serviceaccount:agents:planner',
    ]);
    expect(proposerNames(kubernetesPrincipal({ username: 'alice', groups: [] }, undefined))).toEqual([
      'kubernetes:alice',
    ]);
  });

  it('lets no API key take a Kubernetes principal name', () => {
    for (const name of ['kubernetes:alice', 'serviceaccount:agents/planner'])
      expect(() =>
        ApiKeyRegistry.fromDocument({ keys: [{ name, key: 'longenough', scopes: ['admin'] }] }),
      ).toThrow(/name/);
    expect(
      ApiKeyRegistry.fromDocument({
        keys: [{ name: 'k8s-kubernetes:x', key: 'longenough', scopes: ['admin'] }],
      }).size,
    ).toBe(1);
  });
});
