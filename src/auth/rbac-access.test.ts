import { describe, expect, it } from 'vitest';
import { ARBITER_API_GROUP, describeAccess, rbacAttributes, RBAC_SCOPES, readVerb } from './rbac-access.js';
import { SCOPES } from './scopes.js';

describe('what RBAC grants: scopes as verbs on virtual resources of governance.arbiter.dev', () => {
  it.each([
    ['governance:read', 'get', 'decisions'],
    ['governance:read', 'list', 'decisions'],
    ['governance:review', 'approve', 'decisions'],
    ['governance:review', 'deny', 'decisions'],
    ['audit:read', 'get', 'auditlog'],
    ['audit:read', 'list', 'auditlog'],
  ] as const)('%s with %s asks about %s', (scope, verb, resource) => {
    expect(rbacAttributes(scope, verb)).toEqual({ group: 'governance.arbiter.dev', resource, verb });
  });

  it('names the object when the route knows it', () => {
    expect(rbacAttributes('governance:review', 'approve', 'deploy.production')).toEqual({
      group: ARBITER_API_GROUP,
      resource: 'decisions',
      verb: 'approve',
      name: 'deploy.production',
    });
  });

  it.each([
    // A read verb never grants a review, nor a review verb a read.
    ['governance:review', 'get'],
    ['governance:review', 'list'],
    ['governance:read', 'approve'],
    ['audit:read', 'deny'],
    ['governance:read', 'update'],
    // Scopes that only the keys file or an actor binding give.
    ['governance:propose', 'create'],
    ['capabilities:manage', 'create'],
    ['policies:manage', 'update'],
    ['grants:manage', 'delete'],
    ['admin', 'get'],
    ['admin', '*'],
  ] as const)('never grants %s through %s', (scope, verb) => {
    expect(rbacAttributes(scope, verb, 'x')).toBeUndefined();
  });

  it('grants exactly the reads, the review and the audit log', () => {
    expect(SCOPES.filter((scope) => RBAC_SCOPES[scope])).toEqual([
      'governance:read',
      'governance:review',
      'audit:read',
    ]);
  });

  it('reads one item with get, anything else with list', () => {
    expect(readVerb(true)).toBe('get');
    expect(readVerb(false)).toBe('list');
  });

  it('describes a request the way a refusal names it', () => {
    expect(describeAccess({ group: 'g.io', resource: 'decisions', verb: 'list' })).toBe(
      'list decisions.g.io',
    );
    expect(describeAccess({ group: 'g.io', resource: 'decisions', verb: 'approve', name: 'a.b' })).toBe(
      'approve decisions.g.io "a.b"',
    );
  });
});
