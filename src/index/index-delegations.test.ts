import { describe, expect, it } from 'vitest';
import { API_VERSION, type DelegationObject, type DelegationSpec } from '../model/index.js';
import { indexDelegations } from './index-delegations.js';

const delegation = (name: string, namespaces: string[], createdAt?: string): DelegationObject => {
  const spec: DelegationSpec = { namespaces, capabilities: ['db.*'], maxRiskLevel: 'high' };
  return {
    apiVersion: API_VERSION,
    kind: 'Delegation',
    metadata: { name, ...(createdAt ? { creationTimestamp: createdAt } : {}) },
    spec,
  };
};

describe('indexDelegations', () => {
  it('gives each namespace the Delegation that lists it', () => {
    const a = delegation('team-a', ['team-a']);
    const shared = delegation('shared', ['team-b', 'team-c']);
    const { byNamespace, conflicts } = indexDelegations([shared, a]);
    expect([...byNamespace.keys()]).toEqual(['team-a', 'team-b', 'team-c']);
    expect(byNamespace.get('team-a')).toEqual({ name: 'team-a', spec: a.spec });
    expect(byNamespace.get('team-c')).toEqual({ name: 'shared', spec: shared.spec });
    expect(conflicts.size).toBe(0);
  });

  it('lets the older of two Delegations listing one namespace win, and does not use the newer at all', () => {
    const older = delegation('older', ['team-a'], '2024-01-01T00:00:00Z');
    const newer = delegation('newer', ['team-b', 'team-a'], '2024-02-01T00:00:00Z');
    for (const order of [
      [older, newer],
      [newer, older],
    ]) {
      const { byNamespace, conflicts } = indexDelegations(order);
      expect([...byNamespace.entries()].map(([ns, d]) => [ns, d.name])).toEqual([['team-a', 'older']]);
      expect(conflicts.get('newer')).toEqual({
        field: 'spec.namespaces[1]',
        message: 'namespace team-a is already delegated by Delegation older',
      });
    }
  });
});
