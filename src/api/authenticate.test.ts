import type { Request, Response } from 'express';
import { describe, expect, it } from 'vitest';
import {
  KeyRateLimiter,
  type KubernetesUser,
  type Principal,
  type ResourceAttributes,
  type Scope,
} from '../auth/index.js';
import { ArbiterError } from '../model/index.js';
import { requireScope, type Authenticator, type RbacRequest } from './authenticate.js';

const ALICE: KubernetesUser = { username: 'alice', groups: ['reviewers'] };
const READER: Principal = { name: 'reader', scopes: new Set(['governance:read']) };
/** An API key limited to namespace team-a. */
const TEAM_A_KEY: Principal = {
  name: 'team-a-ci',
  scopes: new Set(['governance:read', 'governance:review']),
  namespaces: new Set(['team-a']),
};
/** A Kubernetes user Arbiter knows nothing about: no scope, RBAC decides. */
const alice: Principal = { name: 'kubernetes:alice', scopes: new Set(), kubernetes: ALICE };
/** A bound ServiceAccount: may propose, RBAC decides the rest. */
const planner: Principal = {
  name: 'serviceaccount:agents/planner',
  scopes: new Set(['governance:propose']),
  kubernetes: { username: 'system:serviceaccount:agents:planner', groups: [] },
};

/**
 * An authenticator with API key `reader`, in cluster mode (`rbac`) also the tokens `alice`
 * and `planner`; RBAC allows what `allowed` lists as `user|verb|resource|name`.
 */
function setup(options: { cluster?: boolean; allowed?: string[]; rbacFails?: boolean } = {}) {
  const asked: ResourceAttributes[] = [];
  const keys: Record<string, Principal> = { reader: READER, team: TEAM_A_KEY };
  const tokens: Record<string, Principal> = { alice, planner };
  const authenticator: Authenticator = {
    authenticate: (credential) => keys[credential] ?? (credential === 'planner' ? planner : undefined),
    ...(options.cluster === false
      ? {}
      : {
          rbac: {
            authenticate: (credential) => Promise.resolve(keys[credential] ?? tokens[credential]),
            allows: (user, attributes) => {
              asked.push(attributes);
              if (options.rbacFails)
                return Promise.reject(new ArbiterError('UNAVAILABLE', 'SubjectAccessReview failed'));
              const where = attributes.namespace === undefined ? '' : `@${attributes.namespace}`;
              const key = `${user.username}|${attributes.verb}|${attributes.resource}|${attributes.name ?? ''}${where}`;
              return Promise.resolve((options.allowed ?? []).includes(key));
            },
          },
        }),
  };
  const limiter = new KeyRateLimiter(1, 1_000);
  /** Runs the guard as express would; resolves with what it let through or threw. */
  const run = async (
    scope: Scope,
    credential: string,
    params: Record<string, string> = {},
    request?: RbacRequest,
  ) => {
    const req = { params, get: () => `Bearer ${credential}` } as unknown as Request;
    const headers: Record<string, string> = {};
    const res = {
      setHeader: (name: string, value: string) => (headers[name] = value),
    } as unknown as Response;
    let passed = false;
    try {
      await requireScope(authenticator, limiter, scope, () => 0, request)(req, res, () => (passed = true));
    } catch (err) {
      return {
        passed,
        err: err as ArbiterError,
        headers,
        principal: req.principal,
        visibility: req.visibility,
      };
    }
    return { passed, err: undefined, headers, principal: req.principal, visibility: req.visibility };
  };
  return { run, asked, limiter };
}

describe('requireScope with RBAC for Kubernetes users', () => {
  it('lets a scope through without asking RBAC, and refuses an API key without it', async () => {
    const { run, asked } = setup({ allowed: ['alice|list|decisions|'] });
    expect((await run('governance:read', 'reader')).passed).toBe(true);
    const refused = await run('audit:read', 'reader');
    expect(refused.err).toMatchObject({
      code: 'FORBIDDEN',
      message: 'key "reader" lacks the scope audit:read',
    });
    expect(asked).toEqual([]);
  });

  it('asks RBAC to list for a collection and to get for one item', async () => {
    const { run, asked } = setup({ allowed: ['alice|list|decisions|', 'alice|get|auditlog|'] });
    const listed = await run('governance:read', 'alice');
    expect(listed.passed).toBe(true);
    expect(listed.principal).toBe(alice);
    expect((await run('audit:read', 'alice', { decision_id: 'd1' })).passed).toBe(true);
    expect(asked).toEqual([
      { group: 'governance.arbiter.dev', resource: 'decisions', verb: 'list' },
      { group: 'governance.arbiter.dev', resource: 'auditlog', verb: 'get' },
    ]);
    // Allowed to list is not allowed to get.
    expect((await run('governance:read', 'alice', { id: 'd1' })).err?.code).toBe('FORBIDDEN');
  });

  it("asks for the route's verb with the object's name, named only when RBAC is asked", async () => {
    const { run, asked } = setup({ allowed: ['alice|approve|decisions|deploy.production'] });
    let looked = 0;
    const review = (capability: string): RbacRequest => ({
      verb: 'approve',
      name: () => {
        looked += 1;
        return Promise.resolve(capability);
      },
    });
    expect((await run('governance:review', 'alice', { id: 'd1' }, review('deploy.production'))).passed).toBe(
      true,
    );
    const other = await run('governance:review', 'alice', { id: 'd2' }, review('payments.transfer'));
    expect(other.err).toMatchObject({
      code: 'FORBIDDEN',
      message:
        '"kubernetes:alice" lacks the scope governance:review, and RBAC does not let user "alice" ' +
        'approve decisions.governance.arbiter.dev "payments.transfer"',
    });
    expect(asked.map((a) => a.name)).toEqual(['deploy.production', 'payments.transfer']);
    expect(looked).toBe(2);
    // An API key is decided by its scopes: nothing to look up.
    await run('governance:review', 'reader', { id: 'd1' }, review('deploy.production'));
    expect(looked).toBe(2);
  });

  it('never lets a read verb stand for a review', async () => {
    const { run, asked } = setup({ allowed: ['alice|get|decisions|'] });
    expect((await run('governance:review', 'alice', { id: 'd1' })).err?.code).toBe('FORBIDDEN');
    expect(asked).toEqual([]);
  });

  it('gives a Kubernetes user nothing RBAC cannot grant: unknown users are not even callers there', async () => {
    const { run, asked } = setup({ allowed: ['alice|list|decisions|'] });
    const propose = await run('governance:propose', 'alice');
    expect(propose.err?.code).toBe('UNAUTHENTICATED');
    // A bound ServiceAccount is a caller, with its own scopes only.
    expect((await run('governance:propose', 'planner')).passed).toBe(true);
    expect((await run('grants:manage', 'planner')).err).toMatchObject({
      code: 'FORBIDDEN',
      message: 'key "serviceaccount:agents/planner" lacks the scope grants:manage',
    });
    expect(asked).toEqual([]);
  });

  it('lets RBAC add to the scopes of a known ServiceAccount', async () => {
    const { run } = setup({ allowed: ['system:serviceaccount:agents:planner|list|auditlog|'] });
    expect((await run('audit:read', 'planner')).passed).toBe(true);
  });

  it('fails closed when RBAC cannot answer', async () => {
    const { run } = setup({ rbacFails: true });
    const res = await run('governance:read', 'alice');
    expect(res.passed).toBe(false);
    expect(res.err?.code).toBe('UNAVAILABLE');
  });

  it('outside a cluster, only API keys and their scopes count', async () => {
    const { run } = setup({ cluster: false });
    expect((await run('governance:read', 'alice')).err?.code).toBe('UNAUTHENTICATED');
    expect((await run('audit:read', 'reader')).err?.code).toBe('FORBIDDEN');
  });

  it('charges the rate limit only for a caller let through', async () => {
    const { run, limiter } = setup({ allowed: [] });
    const refused = await run('governance:read', 'alice');
    expect(refused.err?.code).toBe('FORBIDDEN');
    expect(refused.headers['X-RateLimit-Remaining']).toBeUndefined();
    expect(limiter.take('kubernetes:alice', 0).remaining).toBe(999);
  });
});

describe('requireScope per namespace (issue #38)', () => {
  const review = (namespace: string | undefined): RbacRequest => ({
    verb: 'approve',
    name: () => Promise.resolve('deploy'),
    namespace: () => Promise.resolve(namespace),
    perNamespace: true,
  });

  it("lets a review through that RBAC allows in the decision's review namespace, after asking at cluster scope", async () => {
    const { run, asked } = setup({ allowed: ['alice|approve|decisions|deploy@team-a'] });
    const { passed, err } = await run('governance:review', 'alice', { id: '1' }, review('team-a'));
    expect(err).toBeUndefined();
    expect(passed).toBe(true);
    expect(asked.map((a) => a.namespace ?? 'cluster')).toEqual(['cluster', 'team-a']);
  });

  it('refuses a review allowed only in another namespace, or with no review namespace, naming where it asked', async () => {
    const { run } = setup({ allowed: ['alice|approve|decisions|deploy@team-b'] });
    const other = await run('governance:review', 'alice', { id: '1' }, review('team-a'));
    expect(other.passed).toBe(false);
    expect(other.err).toMatchObject({
      code: 'FORBIDDEN',
      message:
        '"kubernetes:alice" lacks the scope governance:review, and RBAC does not let user "alice" approve decisions.governance.arbiter.dev "deploy", neither at cluster scope nor in namespace team-a',
    });
    const clusterOnly = await run('governance:review', 'alice', { id: '1' }, review(undefined));
    expect(clusterOnly.err?.code).toBe('FORBIDDEN');
  });

  it('lets a read through without cluster scope, seeing the namespaces RBAC allows and never records of none', async () => {
    const { run } = setup({ allowed: ['alice|list|decisions|@team-a'] });
    const { passed, visibility } = await run('governance:read', 'alice', {}, { perNamespace: true });
    expect(passed).toBe(true);
    expect(visibility?.all).toBe(false);
    expect(await visibility!.sees('team-a')).toBe(true);
    expect(await visibility!.sees('team-b')).toBe(false);
    expect(await visibility!.sees(undefined)).toBe(false);
    // Where the route does not filter, no cluster scope is still a refusal.
    expect((await run('governance:read', 'alice')).err?.code).toBe('FORBIDDEN');
  });

  it('sees everything with cluster scope', async () => {
    const { run } = setup({ allowed: ['alice|list|decisions|'] });
    const { visibility } = await run('governance:read', 'alice', {}, { perNamespace: true });
    expect(visibility?.all).toBe(true);
  });

  it('limits a key with namespaces to routes that filter, its namespaces, and its reviews', async () => {
    const { run, asked } = setup();
    const cluster = await run('governance:read', 'team');
    expect(cluster.err).toMatchObject({
      code: 'FORBIDDEN',
      message: 'key "team-a-ci" is limited to the namespaces team-a; this route is about the whole cluster',
    });
    const read = await run('governance:read', 'team', {}, { perNamespace: true });
    expect(read.passed).toBe(true);
    expect([await read.visibility!.sees('team-a'), await read.visibility!.sees('team-b')]).toEqual([
      true,
      false,
    ]);
    expect((await run('governance:review', 'team', { id: '1' }, review('team-a'))).passed).toBe(true);
    expect((await run('governance:review', 'team', { id: '1' }, review('team-b'))).err?.code).toBe(
      'FORBIDDEN',
    );
    expect((await run('governance:review', 'team', { id: '1' }, review(undefined))).err?.code).toBe(
      'FORBIDDEN',
    );
    // A key is never sent to the API server.
    expect(asked).toEqual([]);
  });
});
