import { describe, expect, it } from 'vitest';
import type { IndexedDelegation } from '../index/index.js';
import type { RiskLevel } from '../model/index.js';
import { checkDelegation, coversCapability } from './delegation-check.js';

const delegation: IndexedDelegation = {
  name: 'team-a',
  spec: { namespaces: ['team-a'], capabilities: ['db.*', 'tickets.create'], maxRiskLevel: 'high' },
};
const cap = (name: string, riskLevel: RiskLevel = 'low') => ({ name, riskLevel });

describe('coversCapability', () => {
  it('covers a listed name exactly, and every name under a trailing-".*" pattern', () => {
    const patterns = delegation.spec.capabilities;
    for (const name of ['db.query', 'db.admin.drop', 'tickets.create'])
      expect(coversCapability(patterns, name), name).toBe(true);
    for (const name of ['tickets.close', 'tickets.create.bulk', 'dbx.query', 'db', 'files.db.query'])
      expect(coversCapability(patterns, name), name).toBe(false);
  });
});

describe('checkDelegation', () => {
  it('passes a covered capability at or below the maximum risk level', () => {
    expect(checkDelegation(delegation, 'team-a', cap('db.query', 'high'))).toEqual({ ok: true });
    expect(checkDelegation(delegation, 'team-a', cap('tickets.create'))).toEqual({ ok: true });
  });

  it('denies with no_delegation when no Delegation covers the namespace, and says so', () => {
    expect(checkDelegation(undefined, 'team-a', cap('db.query'))).toEqual({
      ok: false,
      code: 'no_delegation',
      reason:
        'No Delegation covers namespace team-a, so its NamespacedActorGrants authorize nothing (db.query).',
    });
  });

  it('denies with outside_delegation a capability the Delegation does not list, naming what it covers', () => {
    expect(checkDelegation(delegation, 'team-a', cap('files.read'))).toEqual({
      ok: false,
      code: 'outside_delegation',
      reason:
        'Namespace team-a may not grant files.read: Delegation team-a covers only db.*, tickets.create.',
    });
  });

  it('denies with outside_delegation a capability riskier than the maximum, naming both levels', () => {
    expect(checkDelegation(delegation, 'team-a', cap('db.drop', 'critical'))).toEqual({
      ok: false,
      code: 'outside_delegation',
      reason:
        'Namespace team-a may not grant db.drop: its risk level critical is above high, the most Delegation team-a allows.',
    });
  });
});
